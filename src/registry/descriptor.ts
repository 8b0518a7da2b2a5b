/**
 * What a capability is. A descriptor is declared once (each domain's in `src/capabilities/`) and
 * every surface — MCP, HTTP, OpenAPI, CLI, generated docs — is derived from it. The registry core
 * knows no domain: a descriptor is generic over the context its handler is given, and the
 * assembly (`src/capabilities/context.ts`) says which context each `reads` brings.
 */
import type { z } from 'zod';
import type { WireErrorCode } from '../platform/errors.js';
import type { CallContext } from '../platform/call.js';

/**
 * `query` is executed and read-only; `resource` is read and has no handler; `command` is executed
 * and changes something: the server's state, the processes it runs (an agent session), or — the
 * git guard's install and uninstall — the repository's git hooks. No command writes the layer's
 * files. The kind alone decides the HTTP method and the MCP annotations.
 */
export const CAPABILITY_KINDS = ['query', 'resource', 'command'] as const;
export type CapabilityKind = (typeof CAPABILITY_KINDS)[number];

export type Stability = 'stable' | 'experimental' | 'deprecated';

/**
 * Which state a handler reads. It decides where a call can run: `registry` and `layer` handlers
 * are pure functions of the frozen snapshot (any thread, the pool for HTTP); `peers` handlers run
 * where the peer board lives (the main thread); `harness` handlers where the session table lives
 * (the shared server's harness thread).
 */
export const CAPABILITY_READS = ['registry', 'layer', 'peers', 'harness'] as const;
export type CapabilityReads = (typeof CAPABILITY_READS)[number];

/**
 * The capabilities that answer the MCP tasks of a tool that may run as one (MCP 2025-11-25,
 * `execution.taskSupport: "optional"`): `state` a query taking `{task, tool, result?, wait_seconds?}`
 * and answering `{task: {taskId, status, statusMessage, createdAt, lastUpdatedAt}, result?}`,
 * `cancel` a command taking `{task, tool}` and answering `{task, stopped}`. The projection knows
 * nothing else of what a task is.
 */
export interface TaskCompanions {
  state: string;
  cancel: string;
}

export interface Exposure {
  mcp?: { tool?: string; resource?: string; task?: TaskCompanions };
  http?: { method: 'GET' | 'POST'; path: string };
  cli?: { path: string };
}

/**
 * A capability. `C` is the context its handler is given; a descriptor whose context is erased
 * (`never`) is what the registry holds, and whoever runs it supplies the context its `reads` asks for.
 */
export interface CapabilityDescriptor<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType, C = never> {
  /** `namespace.local` */
  id: string;
  kind: CapabilityKind;
  title: string;
  description: string;
  input: I;
  output: O;
  exposure: Exposure;
  stability: Stability;
  reads: CapabilityReads;
  /**
   * One sentence for the `initialize` instructions, telling an agent when to use this capability;
   * `{tool}` stands for its MCP tool name. The instructions never name a tool any other way.
   */
  guidance?: string;
  /**
   * What a command does beyond this process, for the MCP annotations clients ask permission by:
   * `destructive` — it may destroy something (a process, files); `openWorld` — it reaches beyond
   * the checkout (an agent that talks to its model's API).
   */
  effects?: { destructive?: boolean; openWorld?: boolean };
  /**
   * It starts, drives or reads other agents' sessions: a client at the delegation limit (its depth
   * at the policy's `max_depth`) is not offered it at all, as hyprpilot injects no harness there.
   */
  delegation?: boolean;
  /** Wire errors this capability may answer beyond the ones every capability of its kind may. */
  refusals?: readonly WireErrorCode[];
  /**
   * A query whose answer depends on more than the snapshot (the git guard's status reads the hooks
   * directory at each call): no projection may remember its answer for a later call.
   */
  volatile?: boolean;
  /**
   * `call` is what the caller lends this one call: progress to report (`onProgress`) and a signal
   * that aborts when the caller cancels. Always given (empty when the caller lends nothing).
   */
  handler?: (input: z.output<I>, context: C, call: CallContext) => z.input<O> | Promise<z.input<O>>;
}

/** Declares a capability with its types checked against its schemas and its context, then erases them. */
export function defineCapability<I extends z.ZodType, O extends z.ZodType, C>(descriptor: CapabilityDescriptor<I, O, C>): CapabilityDescriptor {
  return Object.freeze(descriptor) as unknown as CapabilityDescriptor;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  idempotentHint: boolean;
  destructiveHint: boolean;
  openWorldHint: boolean;
}

/** MCP annotations derived from the kind and the declared effects; never declared on a projection. */
export function annotationsFor(kind: CapabilityKind, effects: CapabilityDescriptor['effects'] = {}): ToolAnnotations {
  const readOnly = kind !== 'command';
  return {
    readOnlyHint: readOnly,
    idempotentHint: readOnly,
    destructiveHint: !readOnly && effects.destructive === true,
    openWorldHint: effects.openWorld === true,
  };
}

/**
 * Who may call a capability over HTTP. `open`: anyone who can reach a loopback server (the
 * layer's and the registry's read-only queries). `token`: only a caller with the lease's bearer
 * token — every command, and everything that reads peers (their words reach other agents) or acts
 * on the machine. Derived, never declared (SPEC §7).
 */
export type Access = 'open' | 'token';

export function accessFor(kind: CapabilityKind, reads: CapabilityReads): Access {
  return kind === 'query' && (reads === 'registry' || reads === 'layer') ? 'open' : 'token';
}

/** The HTTP method the kind demands. */
export function methodFor(kind: CapabilityKind): 'GET' | 'POST' {
  return kind === 'command' ? 'POST' : 'GET';
}
