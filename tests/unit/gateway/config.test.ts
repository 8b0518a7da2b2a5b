/**
 * The gateway's config at the edge: every problem names the file and the field path; defaults
 * fill what is left out (the provider kind, the timeouts); an unknown kind is refused; a provider whose key variable is unset is kept but not configured; the
 * chain resolves bare names and slug/model when the file is read; the file is re-read only when
 * it changes.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayConfigError, GatewayConfigFile, parseGatewayConfigText, resolveModel } from '../../../src/gateway/config.js';

const FILE = '.ai/local/executor.yaml';
const parse = (text: string, env: Record<string, string> = {}) => parseGatewayConfigText(text, FILE, env);
const problem = (text: string): string => {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the config to be refused');
};

describe('parsing executor.yaml', () => {
  it('fills the documented defaults and resolves the chain', () => {
    const config = parse(
      'providers:\n  local: {base_url: "http://127.0.0.1:11434/v1/", models: ["qwen3-coder:30b"]}\n  hosted: {base_url: https://api.example.com/v1, api_key_env: HOSTED_KEY, models: [m-large]}\nrouting:\n  priority_models: [{model: "qwen3-coder:30b"}, {model: hosted/m-large, reasoning_effort: low}]\n',
      { HOSTED_KEY: 'sk-1' },
    );
    expect(config.providers.get('local')).toMatchObject({ baseUrl: 'http://127.0.0.1:11434/v1', maxConcurrent: 4, maxQueue: 32, firstByteTimeoutMs: 60_000, configured: true, apiKey: null });
    expect(config.providers.get('hosted')).toMatchObject({ apiKey: 'sk-1', configured: true });
    expect(config.chain).toEqual([
      { provider: 'local', model: 'qwen3-coder:30b', reasoningEffort: null },
      { provider: 'hosted', model: 'm-large', reasoningEffort: 'low' },
    ]);
    expect(config.retryAfterBudgetMs).toBe(5_000);
    expect(config.keys).toEqual([]);
    expect(config.prices).toBeNull();
    expect(config.claudeModels).toBe('chain');
  });

  it('keeps a provider whose key variable is unset or empty, not configured', () => {
    const config = parse('providers:\n  hosted: {base_url: https://api.example.com/v1, api_key_env: HOSTED_KEY, models: [m]}\n', { HOSTED_KEY: '' });
    expect(config.providers.get('hosted')).toMatchObject({ configured: false, apiKey: null, apiKeyEnv: 'HOSTED_KEY' });
  });

  it('names the file and the path of every bad field', () => {
    expect(problem('providers:\n  local: {base_url: ftp://x/v1, models: []}\n')).toMatch(
      /^\.ai\/local\/executor\.yaml: providers\.local\.base_url: must be an http\(s\) URL.*; providers\.local\.models: must list at least one model/,
    );
    expect(problem('providers:\n  local: {base_url: http://x/v1, max_queue: -1, first_byte_timeout_seconds: 0}\n')).toMatch(
      /providers\.local\.max_queue: .*providers\.local\.first_byte_timeout_seconds: /,
    );
    expect(problem('providers:\n  local: {base_url: http://x/v1, api_key_env: "not a name"}\n')).toContain('providers.local.api_key_env: must be an environment variable name');
    expect(problem('providers:\n  Bad_Slug: {base_url: http://x/v1}\n')).toContain('a provider slug is');
    expect(problem('providers: {}\nrouting: {priority_models: [{model: m, reasoning_effort: 3}]}\n')).toContain('routing.priority_models[0].reasoning_effort');
    expect(problem('providers: {}\nextra: 1\n')).toMatch(/^\.ai\/local\/executor\.yaml: \(top level\): .*extra/);
    expect(problem('providers: {}\ngateway: {api_key: plain-text-secret}\n')).toContain('gateway: ');
    expect(problem('routing: {}\n')).toContain('providers: ');
  });

  it('takes a provider kind (default openai) and an idle timeout (default 60 s), and refuses an unknown kind or a timeout that is not a positive number', () => {
    const config = parse('providers:\n  a: {base_url: http://x/v1}\n  b: {base_url: http://y/v1, kind: openai, idle_timeout_seconds: 1.5}\n');
    expect(config.providers.get('a')).toMatchObject({ kind: { name: 'openai' }, idleTimeoutMs: 60_000 });
    expect(config.providers.get('b')).toMatchObject({ kind: { name: 'openai' }, idleTimeoutMs: 1_500 });
    expect(problem('providers:\n  a: {base_url: http://x/v1, kind: anthropic}\n')).toBe(`${FILE}: providers.a.kind: must be a provider kind: openai`);
    expect(problem('providers:\n  a: {base_url: http://x/v1, kind: 3}\n')).toMatch(/^\.ai\/local\/executor\.yaml: providers\.a\.kind: /);
    for (const bad of ['0', '-1', '"10"', 'soon', 'null']) {
      expect(problem(`providers:\n  a: {base_url: http://x/v1, idle_timeout_seconds: ${bad}}\n`)).toMatch(/^\.ai\/local\/executor\.yaml: providers\.a\.idle_timeout_seconds: /);
    }
  });

  it('refuses a chain entry no provider serves, and text that is not YAML or is empty', () => {
    expect(problem('providers:\n  a: {base_url: http://x/v1, models: [m]}\nrouting: {priority_models: [{model: m}, {model: a/other}]}\n')).toBe(
      `${FILE}: routing.priority_models[1].model: no provider serves "a/other" (name a model a provider lists, or slug/model)`,
    );
    expect(problem('providers: [\n')).toMatch(/^\.ai\/local\/executor\.yaml: not valid YAML: /);
    expect(problem('')).toBe(`${FILE}: the file is empty; it needs at least "providers:"`);
  });

  it('resolves slug/model first, then a bare name to the first provider serving it; a provider without models takes any slug/model', () => {
    const config = parse('providers:\n  a: {base_url: http://x/v1, models: [m, "org/model"]}\n  b: {base_url: http://y/v1, models: [m]}\n  open: {base_url: http://z/v1}\n');
    expect(resolveModel(config.providers, 'm')).toMatchObject({ provider: { slug: 'a' }, model: 'm' });
    expect(resolveModel(config.providers, 'b/m')).toMatchObject({ provider: { slug: 'b' }, model: 'm' });
    expect(resolveModel(config.providers, 'org/model')).toMatchObject({ provider: { slug: 'a' }, model: 'org/model' });
    expect(resolveModel(config.providers, 'open/anything:7b')).toMatchObject({ provider: { slug: 'open' }, model: 'anything:7b' });
    expect(resolveModel(config.providers, 'b/other')).toBeNull();
    expect(resolveModel(config.providers, 'anything')).toBeNull();
  });
});

describe('the config file', () => {
  let dir = '';
  afterEach(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('answers the same reading until the file changes, then reads it again', async () => {
    dir = await mkdtemp(join(tmpdir(), 'gateway-config-'));
    const path = join(dir, 'executor.yaml');
    const file = new GatewayConfigFile(path, FILE, {});
    const missing = await file.current();
    expect(missing).toEqual({ ok: false, message: `${FILE}: no such file; create it to configure the gateway's providers (docs/GATEWAY.md)` });
    await writeFile(path, 'providers:\n  a: {base_url: http://x/v1, models: [m]}\n');
    const first = await file.current();
    expect(first.ok).toBe(true);
    expect(await file.current()).toBe(first);
    await writeFile(`${path}.new`, 'providers:\n  a: {base_url: http://x/v1, models: [m, n]}\n');
    await rename(`${path}.new`, path);
    const second = await file.current();
    expect(second).not.toBe(first);
    expect(second.ok && second.config.providers.get('a')?.models).toEqual(['m', 'n']);
  });
});
