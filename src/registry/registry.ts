/**
 * The capability registry: descriptors checked once, frozen, and looked up by every projection.
 */
import type { z } from 'zod';
import { CapabilityError, MajordomusError } from '../platform/errors.js';
import { catalogEntry, catalogFrom, type CapabilityCatalog } from './catalog.js';
import { registryViolations } from './checks.js';
import type { CapabilityDescriptor } from './descriptor.js';
import type { CallContext } from '../platform/call.js';

export interface Registry {
  readonly descriptors: readonly CapabilityDescriptor[];
  readonly catalog: CapabilityCatalog;
  byId(id: string): CapabilityDescriptor | undefined;
  byTool(name: string): CapabilityDescriptor | undefined;
  byRoute(method: string, path: string): CapabilityDescriptor | undefined;
}

/** Builds the registry, or refuses with every violation listed. */
export function buildRegistry(descriptors: readonly CapabilityDescriptor[]): Registry {
  const violations = registryViolations(descriptors);
  if (violations.length > 0) {
    throw new MajordomusError(
      'MAJ_REGISTRY_INVALID',
      `the capability registry refuses to build:\n  - ${violations.join('\n  - ')}`,
    );
  }
  const sorted = Object.freeze([...descriptors].sort((a, b) => a.id.localeCompare(b.id)));
  const byId = new Map(sorted.map((d) => [d.id, d]));
  const byTool = new Map<string, CapabilityDescriptor>();
  const byRoute = new Map<string, CapabilityDescriptor>();
  for (const d of sorted) {
    if (d.exposure.mcp?.tool) byTool.set(d.exposure.mcp.tool, d);
    if (d.exposure.http) byRoute.set(`${d.exposure.http.method} ${d.exposure.http.path}`, d);
  }
  const catalog = catalogFrom(sorted.map(catalogEntry));
  return Object.freeze({
    descriptors: sorted,
    catalog,
    byId: (id: string) => byId.get(id),
    byTool: (name: string) => byTool.get(name),
    byRoute: (method: string, path: string) => byRoute.get(`${method} ${path}`),
  });
}

/** Describes zod issues in one readable line. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(input)'}: ${issue.message}`)
    .join('; ');
}

/** Validates the input against the descriptor's schema; a mismatch is `invalid_input`. */
export function parseInput(descriptor: CapabilityDescriptor, input: unknown): unknown {
  const parsed = descriptor.input.safeParse(input ?? {});
  if (!parsed.success) {
    throw new CapabilityError('invalid_input', `${descriptor.id}: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

const NO_CALL_CONTEXT: CallContext = Object.freeze({});

export interface ExecuteOptions {
  /**
   * `MAJORDOMUS_FAULT`'s capability id: that capability throws an unexpected error instead of
   * running. It is checked here, where every projection (stdio, HTTP, the pool, the command line)
   * runs a capability, so each one's answer to an internal failure can be tested.
   */
  fault?: string | null;
  /** What the caller lends this call (progress, cancellation); the handler gets `{}` without one. */
  call?: CallContext;
}

/**
 * Runs an executable capability over already validated input, with the context its `reads` asks
 * for (the caller's to supply). The handler's answer is parsed by the output schema, so no
 * surface can answer outside the contract it publishes.
 */
export async function execute(
  descriptor: CapabilityDescriptor,
  input: unknown,
  context: unknown,
  options: ExecuteOptions = {},
): Promise<unknown> {
  if (!descriptor.handler) throw new CapabilityError('not_found', `${descriptor.id} is a resource, not executable`);
  if (descriptor.id === options.fault) throw new Error(`${descriptor.id} failed on purpose (MAJORDOMUS_FAULT)`);
  const answer = await descriptor.handler(input as never, context as never, options.call ?? NO_CALL_CONTEXT);
  return descriptor.output.parse(answer);
}
