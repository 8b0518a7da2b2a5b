#!/usr/bin/env node
/**
 * The measurement behind the choice of full-text library for `objects.search` (docs/DECISIONS.md,
 * "Search"): MiniSearch, FlexSearch and Orama over the same generated layer of 5,000 documents
 * (benches/lib/common.mjs, as the micro bench), each fed the same five fields and the same
 * accent-folding term processor. For each: build time, serialized size, load-from-serialized
 * time, search p50/p99 over several queries (plain, several terms, prefix, typo, accented), and
 * which of the wanted properties it shows on this data (a prefix, a typo and an accented or
 * upper-case spelling find first what the plain word finds first; a loaded index answers as the
 * fresh one; two runs answer alike).
 * Prints a table; writes benches/results/search-libraries-latest.json. No bar: it informs a choice.
 *
 * Environment: BENCH_SEARCH_DOCS (5000), BENCH_SEARCH_ROUNDS (search rounds per query, 50).
 */
import MiniSearch from 'minisearch';
import { Document as FlexDocument, Encoder as FlexEncoder } from 'flexsearch';
import { create as oramaCreate, insertMultiple as oramaInsertMultiple, load as oramaLoad, save as oramaSave, search as oramaSearch } from '@orama/orama';
import { fmt, machine, makeRepo, runWhenMain, summarize, table, writeResult, knob } from './lib/common.mjs';
import { internal } from './lib/internals.mjs';

const DOCS = knob('BENCH_SEARCH_DOCS', 5000, 1000);
const ROUNDS = knob('BENCH_SEARCH_ROUNDS', 50, 10);
const LIMIT = 20;

/** Queries, and for the feature checks, a document id each must find (set from the data). */
const QUERIES = ['lease bridge', 'snapshot', 'pool thread latency', 'knowledge search', 'registry schema session', 'throughp', 'snapsot', 'látency'];
const FIELDS = ['title', 'identity', 'tags', 'description', 'content'];
const BOOSTS = { title: 5, identity: 3, tags: 2.5, description: 2, content: 1 };

const fold = (term) => term.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
const tokenize = (text) => text.split(/[^\p{L}\p{N}\p{M}]+/u).filter((t) => t !== '');
const fieldsOf = (o) => ({ id: o.uri, title: o.title, identity: o.identity, tags: o.tags.join(' '), description: o.description, content: o.content });
const fuzzyOf = (term) => (term.length <= 4 ? 0 : term.length <= 8 ? 1 : 2);

function time(fn) {
  const t0 = process.hrtime.bigint();
  const value = fn();
  return { value, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function timeAsync(fn) {
  const t0 = process.hrtime.bigint();
  const value = await fn();
  return { value, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

// ---------------------------------------------------------------------------------------------
// The three candidates behind one shape: build, serialize, load, search → ids best first.

const MINISEARCH_OPTIONS = {
  idField: 'id',
  fields: FIELDS,
  tokenize,
  processTerm: (term) => fold(term) || null,
  searchOptions: { boost: BOOSTS, prefix: (term) => term.length >= 3, fuzzy: fuzzyOf, maxFuzzy: 2 },
};

const minisearch = {
  name: 'MiniSearch 7.2.0',
  build(docs) {
    const index = new MiniSearch(MINISEARCH_OPTIONS);
    index.addAll(docs);
    return index;
  },
  serialize: (index) => JSON.stringify(index),
  load: (text) => MiniSearch.loadJSON(text, MINISEARCH_OPTIONS),
  search: (index, query) => index.search(query).slice(0, LIMIT).map((r) => r.id),
  scores: (index, query) => index.search(query).slice(0, LIMIT).map((r) => r.score),
};

function flexIndex() {
  const encoder = new FlexEncoder({ normalize: (text) => fold(text), split: /[^\p{L}\p{N}]+/u });
  return new FlexDocument({
    tokenize: 'forward',
    encoder,
    document: { id: 'id', index: FIELDS.map((field) => ({ field, tokenize: 'forward', encoder })) },
  });
}

const flexsearch = {
  name: 'FlexSearch 0.8.212',
  build(docs) {
    const index = flexIndex();
    for (const doc of docs) index.add(doc);
    return index;
  },
  async serialize(index) {
    const parts = {};
    await index.export((key, data) => {
      parts[key] = data;
    });
    return JSON.stringify(parts);
  },
  async load(text) {
    const index = flexIndex();
    for (const [key, data] of Object.entries(JSON.parse(text))) await index.import(key, data);
    return index;
  },
  // Per-field lists merged by field order (FlexSearch returns no score; `suggest` lets a query
  // of several terms match documents holding only some of them).
  search(index, query) {
    const seen = new Set();
    for (const field of index.search(query, { limit: 200, suggest: true })) for (const id of field.result) seen.add(id);
    return [...seen].slice(0, LIMIT);
  },
  scores: () => [],
};

const ORAMA_SCHEMA = { title: 'string', identity: 'string', tags: 'string', description: 'string', content: 'string' };
const oramaTokenizer = {
  language: 'english',
  normalizationCache: new Map(),
  tokenize: (raw) => tokenize(raw ?? '').map(fold),
};

const orama = {
  name: 'Orama 3.1.18',
  build(docs) {
    const db = oramaCreate({ schema: ORAMA_SCHEMA, components: { tokenizer: oramaTokenizer } });
    oramaInsertMultiple(db, docs);
    return db;
  },
  serialize: (db) => JSON.stringify(oramaSave(db)),
  load(text) {
    const db = oramaCreate({ schema: ORAMA_SCHEMA, components: { tokenizer: oramaTokenizer } });
    oramaLoad(db, JSON.parse(text));
    return db;
  },
  // Orama's tolerance is one edit distance for the whole query and it always matches prefixes.
  search: (db, query) => oramaSearch(db, { term: query, properties: FIELDS, boost: BOOSTS, tolerance: 1, limit: LIMIT }).hits.map((h) => h.id),
  scores: (db, query) => oramaSearch(db, { term: query, properties: FIELDS, boost: BOOSTS, tolerance: 1, limit: LIMIT }).hits.map((h) => h.score),
};

// ---------------------------------------------------------------------------------------------

async function measure(library, docs) {
  const built = time(() => library.build(docs));
  const serialized = await timeAsync(() => library.serialize(built.value));
  const loaded = await timeAsync(() => library.load(serialized.value));
  const search = {};
  for (const query of QUERIES) {
    for (let k = 0; k < 20; k++) library.search(loaded.value, query); // warm up
    const samples = [];
    for (let k = 0; k < ROUNDS; k++) samples.push(time(() => library.search(loaded.value, query)).ms);
    const s = summarize(samples);
    search[query] = { p50_ms: s.p50, p99_ms: s.p99 };
  }
  const all = summarize(Object.values(search).map((s) => s.p50_ms));
  const answers = (index) => QUERIES.map((q) => library.search(index, q));
  const fresh = answers(built.value);
  // A variant finds what the plain word finds: the same first answer, among as many.
  const top = (query) => library.search(loaded.value, query)[0];
  const findsAsPlain = (variant, plain) => top(plain) !== undefined && top(variant) === top(plain);
  return {
    library: library.name,
    build_ms: built.ms,
    serialized_bytes: Buffer.byteLength(serialized.value),
    serialize_ms: serialized.ms,
    load_ms: loaded.ms,
    search,
    search_p50_of_p50s_ms: all.p50,
    search_worst_p99_ms: Math.max(...Object.values(search).map((s) => s.p99_ms)),
    scores: library.scores(loaded.value, QUERIES[0]).length > 0,
    prefix: findsAsPlain('throughp', 'throughput'),
    typo: findsAsPlain('snapsot', 'snapshot'),
    accents: findsAsPlain('látency', 'latency') && findsAsPlain('LATENCY', 'latency'),
    loaded_equals_fresh: JSON.stringify(fresh) === JSON.stringify(answers(loaded.value)),
    deterministic: JSON.stringify(answers(loaded.value)) === JSON.stringify(answers(loaded.value)),
  };
}

export async function main() {
  const startedAt = new Date().toISOString();
  const machineBefore = machine();
  const { loadLayer } = await internal('layer/load');
  const rules = Math.round(DOCS * 0.4);
  const repo = await makeRepo({ rules, documents: DOCS - rules, git: false, prefix: 'majordomus-search-libs-' });
  const results = [];
  try {
    const index = await loadLayer({ cwd: repo.root, discovery: 'filesystem', strict: false });
    if (index.objects.length !== DOCS) throw new Error(`the generated layer indexed ${index.objects.length}/${DOCS} objects`);
    const docs = index.objects.map(fieldsOf);
    for (const library of [minisearch, flexsearch, orama]) {
      process.stderr.write(`search libraries: measuring ${library.name}\n`);
      results.push(await measure(library, docs));
    }
  } finally {
    await repo.cleanup();
  }
  const output = { name: 'search-libraries', started_at: startedAt, machine_before: machineBefore, machine_after: machine(), documents: DOCS, queries: QUERIES, results };
  const file = await writeResult('search-libraries', output);
  const yes = (b) => (b ? 'yes' : 'no');
  console.log(
    [
      `Search libraries (${DOCS} documents, ${ROUNDS} rounds per query; load avg before ${machineBefore.loadavg['1m']}, after ${output.machine_after.loadavg['1m']})`,
      table(
        ['library', 'build', 'serialized', 'load', 'search p50 (median of queries)', 'worst p99', 'scores', 'prefix', 'typo', 'accents', 'loaded = fresh', 'deterministic'],
        results.map((r) => [
          r.library,
          `${fmt(r.build_ms, 0)} ms`,
          `${fmt(r.serialized_bytes / 1e6, 2)} MB`,
          `${fmt(r.load_ms, 0)} ms`,
          `${fmt(r.search_p50_of_p50s_ms * 1000, 0)} µs`,
          `${fmt(r.search_worst_p99_ms * 1000, 0)} µs`,
          yes(r.scores),
          yes(r.prefix),
          yes(r.typo),
          yes(r.accents),
          yes(r.loaded_equals_fresh),
          yes(r.deterministic),
        ]),
      ),
      table(['library', ...QUERIES.map((q) => `p50 ${q}`)], results.map((r) => [r.library, ...QUERIES.map((q) => `${fmt(r.search[q].p50_ms * 1000, 0)} µs`)])),
      `written ${file}`,
    ].join('\n'),
  );
  return {
    name: 'search-libraries',
    output,
    summaryRows: results.map((r) => ['search-libraries', `${r.library} search p50`, `${fmt(r.search_p50_of_p50s_ms * 1000, 0)} µs (build ${fmt(r.build_ms, 0)} ms, ${fmt(r.serialized_bytes / 1e6, 2)} MB)`, 'info']),
  };
}

runWhenMain(import.meta.url, main);
