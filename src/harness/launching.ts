/**
 * Starting a turn, as a caller asks for one: a spawn (a new session and its first turn) or a send
 * (the next turn of a session: a resume, or a steer that stops the running turn first). The checks
 * come in HARNESS.md's order, each a refusal that names its fix; only then is a turn started.
 */
import { randomUUID } from 'node:crypto';
import type { CallContext } from '../platform/call.js';
import { startTicksOf } from '../platform/proc.js';
import { checkMode } from './modes.js';
import { prepareTurn, promptOf, type PromptInput } from './prepare.js';
import { nominatedProfile, profilesOf } from './profiles.js';
import { launchSettings, type Session, type Turn } from './session.js';
import type { SessionTable } from './session-table.js';
import type { LaunchRecord, SessionRecord } from './store.js';
import { startTurn, stopTurn } from './turn.js';
import { HarnessRefusal } from './types.js';
import { adapterFor } from './vendors/index.js';

export interface LaunchInput extends PromptInput {
  mode?: string;
  wait?: boolean;
  timeout_seconds?: number;
}

/** One overlay of the profile (`{model: "opus"}`). */
export type ConfigOverlay = Record<string, string>;

export interface SpawnInput extends LaunchInput {
  profile: string;
  cwd?: string;
  /** hyprpilot's shape, a list folded in order (the later wins); one object is a list of one. */
  with_config?: ConfigOverlay | ConfigOverlay[];
  args?: string[];
}

export interface SendInput extends LaunchInput {
  session: string;
  steer?: boolean;
}

/** A turn that was started, and the session it belongs to. */
export interface Started {
  entry: Session;
  turn: Turn;
}

const WITH_CONFIG_KEYS = new Set(['model', 'effort', 'mode']);

/**
 * The overlays folded into one, the later winning; a key other than model, effort and mode is
 * refused (an allow-list: any other key of a profile can replace the program that runs).
 */
export function foldOverlays(given: SpawnInput['with_config']): ConfigOverlay {
  const overlays = given === undefined ? [] : Array.isArray(given) ? given : [given];
  const denied = [...new Set(overlays.flatMap((overlay) => Object.keys(overlay)).filter((key) => !WITH_CONFIG_KEYS.has(key)))];
  if (denied.length > 0) {
    throw new HarnessRefusal(`with_config may set only model, effort and mode; remove ${denied.map((k) => JSON.stringify(k)).join(', ')}`);
  }
  return Object.assign({}, ...overlays) as ConfigOverlay;
}

/** A new session of a nominated profile, with its first turn started. */
export async function spawnSession(table: SessionTable, input: SpawnInput, call: CallContext, spawnedBy: string | null): Promise<Started> {
  table.refuseWhileStopping();
  const depth = call.depth ?? table.depth;
  const limits = table.policy.limits;
  if (depth >= limits.maxDepth) throw new HarnessRefusal(`spawn refused: delegation limit (depth ${depth}, max ${limits.maxDepth})`);
  table.checkCapacity();
  const release = table.holdSlot();
  try {
    return await startSession(table, input, depth, spawnedBy);
  } finally {
    release();
  }
}

/** The checks after capacity, in HARNESS.md's order, then the session and its first turn. */
async function startSession(table: SessionTable, input: SpawnInput, depth: number, spawnedBy: string | null): Promise<Started> {
  const withConfig = foldOverlays(input.with_config);
  const profile = nominatedProfile(table.layer, table.policy, input.profile);
  checkMode(adapterFor(profile.agent), profile, input.mode ?? withConfig.mode);
  const launchRecord: LaunchRecord = {
    cwd: input.cwd ?? profile.cwd ?? '',
    args: [...(profile.args ?? []), ...(input.args ?? [])],
    ...launchSettings({
      model: withConfig.model ?? profile.model,
      effort: withConfig.effort ?? profile.effort,
      mode: input.mode ?? withConfig.mode ?? profile.mode,
    }),
  };
  const prompt = await promptOf(table.root, table.floor, input);
  const session = randomUUID();
  const createdAt = new Date().toISOString();
  const record: SessionRecord = {
    session,
    profile: profile.id,
    agent: profile.agent,
    launch: launchRecord,
    pid: null,
    pgid: null,
    startTicks: null,
    ownerPid: process.pid,
    ownerStartTicks: startTicksOf(process.pid),
    createdAt,
    startedAt: createdAt,
    turn: 0,
    ...(spawnedBy === null ? {} : { spawnedBy }),
  };
  const prepared = prepareTurn(table, record, profile, prompt, null, depth);
  const entry: Session = { record, turns: [], launching: null, argv: prepared.argv, envNames: prepared.envNames };
  const turn = await startTurn(table, entry, prepared, prompt);
  // Listed only once it has a turn: every reader takes a session's latest turn for granted
  // (a session_list while a peer spawned used to fail on the turnless entry).
  table.add(entry);
  table.turnStarted(record.session, turn.turn);
  return { entry, turn };
}

/** The session's next turn: resumed when it is idle, steered (the running turn stopped) when asked. */
export async function sendTurn(table: SessionTable, input: SendInput, call: CallContext): Promise<Started & { delivery: 'steered' | 'resumed' }> {
  table.refuseWhileStopping();
  const entry = table.get(input.session);
  const current = entry.turns.at(-1);
  const running = current?.status === 'running';
  if (running && !input.steer) {
    throw new HarnessRefusal(`session ${input.session} already has a turn in flight; wait (session_read with wait), read, or steer (session_send with steer: true)`);
  }
  if (entry.record.vendorId === undefined) {
    throw new HarnessRefusal(`cannot resume session ${input.session}: the agent never reported a session id; spawn a new session instead`);
  }
  if (entry.launching !== null) {
    throw new HarnessRefusal(
      entry.launching === 'steer'
        ? `session ${input.session} is already being steered; wait for that turn to start`
        : `session ${input.session} has a turn starting; wait for it, then read or steer`,
    );
  }
  // A steer replaces a running turn: it needs no slot of its own.
  if (!running) table.checkCapacity();
  const profile = profilesOf(table.layer).get(entry.record.profile);
  if (profile === undefined || !profile.harness.enabled || !table.policy.inScope(profile.id)) {
    throw new HarnessRefusal(`profile "${entry.record.profile}" of session ${input.session} is no longer nominated for the harness; call list_profiles`);
  }
  checkMode(adapterFor(profile.agent), profile, input.mode);
  entry.launching = running ? 'steer' : 'send';
  const release = running ? () => undefined : table.holdSlot();
  let turn: Turn;
  try {
    const prompt = await promptOf(table.root, table.floor, input);
    const launch = input.mode === undefined ? entry.record.launch : { ...entry.record.launch, mode: input.mode };
    const prepared = prepareTurn(table, { ...entry.record, launch }, profile, prompt, entry.record.vendorId, call.depth ?? table.depth);
    entry.record.launch = launch;
    if (running && current) await stopTurn(current, 'steered', table.graceMs);
    entry.argv = prepared.argv;
    entry.envNames = prepared.envNames;
    turn = await startTurn(table, entry, prepared, prompt);
  } finally {
    entry.launching = null;
    release();
  }
  turn.delivery = running ? 'steered' : 'resumed';
  table.turnStarted(entry.record.session, turn.turn);
  return { entry, turn, delivery: turn.delivery };
}
