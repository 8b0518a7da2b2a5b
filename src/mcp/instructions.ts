/**
 * The `initialize` instructions: what a client learns before its first tool call — what is
 * served, where the server is, who it is on the board, who else is there and what they said.
 */
import type { ObjectKind } from '../layer/types.js';
import type { Peer } from '../peers/board.js';

export interface InstructionFacts {
  counts: Partial<Record<ObjectKind, number>>;
  state: 'ok' | 'degraded';
  diagnostics: number;
  /** The shared server's base URL, or null when this session is served alone. */
  url: string | null;
  you: string;
  peers: readonly Peer[];
}

export function instructionsFor(facts: InstructionFacts): string {
  const counts = Object.entries(facts.counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${n} ${kind}${n === 1 ? '' : 's'}`);
  const lines = [
    `majordomus serves this checkout's .ai layer: ${counts.length > 0 ? counts.join(', ') : 'no objects'}.`,
  ];
  if (facts.state === 'degraded') {
    lines.push(`The layer is degraded: ${facts.diagnostics} file(s) were excluded (see majordomus_info).`);
  }
  lines.push(
    'Read objects with majordomus_list, majordomus_search and majordomus_get, or as MCP resources (majordomus://<kind>/<identity>).',
  );
  if (facts.url !== null) {
    lines.push(
      `Shared server: ${facts.url} (Swagger UI ${facts.url}/docs, OpenAPI ${facts.url}/openapi.json, REST ${facts.url}/api/v1/, MCP ${facts.url}/mcp).`,
    );
  } else {
    lines.push('This session is served alone: no other peer can see it.');
  }
  lines.push(`You are peer ${facts.you}.`);
  const others = facts.peers.filter((p) => p.id !== facts.you);
  if (others.length === 0) {
    lines.push('No other peer is attached.');
  } else {
    lines.push('Other peers:');
    for (const peer of others) {
      const said = peer.announcement
        ? `announced "${peer.announcement.intent}"${peer.announcement.paths.length > 0 ? ` on ${peer.announcement.paths.join(', ')}` : ''}`
        : 'has announced nothing';
      lines.push(`- ${peer.id} (${peer.client.name} ${peer.client.version}, ${peer.transport}) ${said}`.replace(/ {2,}/g, ' '));
    }
  }
  lines.push(
    'Before you change files, announce your intent and the paths you will touch with majordomus_announce {intent, paths}; it answers with any overlapping peers. See everyone with majordomus_peers.',
  );
  return lines.join('\n');
}
