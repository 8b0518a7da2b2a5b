/** The adapter of each agent a profile may name. */
import type { AgentName } from '../types.js';
import type { VendorAdapter } from './adapter.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { executor } from './executor.js';
import { gemini } from './gemini.js';
import { opencode } from './opencode.js';

const ADAPTERS: Readonly<Record<AgentName, VendorAdapter>> = { claude, codex, gemini, opencode, executor };

/** The adapter that launches and reads `agent`'s CLI. */
export function adapterFor(agent: AgentName): VendorAdapter {
  return ADAPTERS[agent];
}

export type { Invocation, LaunchShape, TranscriptEntry, TurnParser, VendorAdapter } from './adapter.js';
