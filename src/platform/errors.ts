/**
 * The error catalogue. Two families, as in the MCP SDK:
 *
 * - **Local errors** (`MajordomusError`) never leave the process as such; each code carries the
 *   exit code the command line ends with.
 * - **Wire errors** (`CapabilityError`) are answers to a client; each code carries its HTTP status,
 *   and MCP turns it into an `isError` tool result or a JSON-RPC error.
 *
 * Codes are stable and never reused: they are part of the public surface (docs/ERRORS.md lists
 * them and a test keeps that page, this file and the OpenAPI error schema in step).
 */

export const EXIT = {
  ok: 0,
  usage: 2,
  contract: 10,
  missing: 12,
  internal: 13,
} as const;

export const LOCAL_ERRORS = {
  MAJ_USAGE: { exit: EXIT.usage, summary: 'The command line is malformed.' },
  MAJ_MANIFEST_INVALID: { exit: EXIT.contract, summary: 'The layer manifest is unreadable or violates its schema.' },
  MAJ_LAYER_DEGRADED: { exit: EXIT.contract, summary: '--strict refuses a layer with diagnostics.' },
  MAJ_VALIDATION_FAILED: { exit: EXIT.contract, summary: 'A validation (registry, schema, generated files) failed.' },
  MAJ_GENERATED_STALE: { exit: EXIT.contract, summary: 'docs/generated/ is not what `generate` would write.' },
  MAJ_CONFIG_UNPARSABLE: { exit: EXIT.contract, summary: '`init` cannot parse (or cannot safely edit) a client configuration file; nothing was written.' },
  MAJ_UNSAFE_TARGET: { exit: EXIT.contract, summary: '`init` refuses a target whose path passes through a symbolic link or leaves the repository; nothing was written.' },
  MAJ_INIT_CONFLICT: { exit: EXIT.contract, summary: '`init` found a majordomus entry of a client configuration that differs from its own; nothing was written (--force replaces it).' },
  MAJ_NO_ROOT: { exit: EXIT.missing, summary: 'No directory holding .ai/manifest.yaml was found.' },
  MAJ_UNKNOWN_CAPABILITY: { exit: EXIT.missing, summary: 'No capability has that id.' },
  MAJ_NO_BUILD: { exit: EXIT.missing, summary: 'The executable has not been built.' },
  MAJ_NOT_A_REPOSITORY: { exit: EXIT.missing, summary: '`init` was run outside a git work tree without --repo.' },
  MAJ_HTTP_ENGINE: { exit: EXIT.missing, summary: 'MAJORDOMUS_HTTP_ENGINE=uws, but uWebSockets.js has no binary this system can load (unset it: node:http serves where uWS cannot).' },
  MAJ_NO_SERVER: { exit: EXIT.missing, summary: 'No live server holds the checkout\'s lease (`majordomus open` needs one: start `majordomus serve`).' },
  MAJ_GIT_UNAVAILABLE: { exit: EXIT.internal, summary: 'git could not list the tracked files.' },
  MAJ_REGISTRY_INVALID: { exit: EXIT.internal, summary: 'The capability registry refused to build.' },
  MAJ_PORT_UNAVAILABLE: { exit: EXIT.internal, summary: 'No port could be bound.' },
  MAJ_LEASE: { exit: EXIT.internal, summary: 'The lease could not be read or written.' },
  MAJ_INTERNAL: { exit: EXIT.internal, summary: 'An unexpected internal failure.' },
} as const satisfies Record<string, { exit: number; summary: string }>;

export type LocalErrorCode = keyof typeof LOCAL_ERRORS;

/** A failure inside the process; the CLI ends with its catalogue exit code. */
export class MajordomusError extends Error {
  readonly code: LocalErrorCode;
  constructor(code: LocalErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MajordomusError';
    this.code = code;
  }
  get exitCode(): number {
    return LOCAL_ERRORS[this.code].exit;
  }
}

export const WIRE_ERRORS = {
  invalid_input: { status: 400, summary: 'The input does not match the capability input schema.' },
  invalid_json: { status: 400, summary: 'The body is not JSON, or not a JSON object.' },
  session_required: { status: 400, summary: 'A non-initialize /mcp request carried no Mcp-Session-Id.' },
  unauthorized: { status: 401, summary: 'The request needs Authorization: Bearer with the token of the checkout\'s lease.' },
  forbidden: { status: 403, summary: 'The Host or Origin header does not name this loopback server.' },
  not_found: { status: 404, summary: 'No route, object or capability by that name.' },
  session_not_found: { status: 404, summary: 'The Mcp-Session-Id is unknown or expired.' },
  stream_not_found: { status: 404, summary: 'GET /mcp carried a Last-Event-ID of no stream the session still keeps (not one of its event ids, or its stream ended over 30 s ago).' },
  method_not_allowed: { status: 405, summary: 'The route exists but not for this method.' },
  not_acceptable: { status: 406, summary: 'A stream was asked for without saying so: GET /mcp without Accept: text/event-stream, or GET /live without a WebSocket upgrade.' },
  lease_lost: { status: 409, summary: 'This server no longer holds the lease and takes no new sessions.' },
  conflict: { status: 409, summary: 'The claim overlaps another live peer\'s claim and one of them is exclusive; the message names the peer, its intent and the paths (pass proceed: true to claim anyway).' },
  too_large: { status: 413, summary: 'The body is larger than 1 MiB.' },
  unsupported_media_type: { status: 415, summary: 'A body was sent with a Content-Type other than application/json.' },
  refused: { status: 422, summary: 'The input is well-formed but the capability refuses it.' },
  outside_checkout: { status: 422, summary: 'A path leaves the checkout, as written or through a symbolic link; give a path inside it, relative to its root.' },
  not_regular_file: { status: 422, summary: 'A path names a directory, FIFO, socket or device where a regular file is needed; it was refused without being opened.' },
  protected_path: { status: 403, summary: 'The path is protected (the layer\'s local half, .env*, keys and credentials, the policy\'s deny globs): its content never goes to a model.' },
  mode_not_allowed: { status: 422, summary: 'A spawn or turn asked for a permission mode wider than its profile\'s; a profile widens only through allowed_modes.' },
  internal: { status: 500, summary: 'An unexpected failure while serving the request.' },
  busy: { status: 503, summary: 'The server is saturated or shutting down; retry later.' },
  model_not_found: { status: 404, summary: 'The gateway has no configured provider serving the model asked for.' },
  forbidden_model: { status: 403, summary: 'The gateway key the request carried may not use the model asked for (its models in gateway.keys), or none of the priority chain\'s; the message names the key and the model.' },
  rate_limited: { status: 429, summary: 'Too many requests: a peer or the overseer sends messages faster than its rate (the body\'s retry_after_ms says when to send again), or every provider the gateway may use is rate-limited for longer than its retry budget; see Retry-After.' },
  upstream_unavailable: { status: 502, summary: 'Every provider the gateway tried failed (connection, timeout, 429, 5xx); the message lists each attempt.' },
  upstream_idle: { status: 504, summary: 'A provider sent nothing for longer than its idle_timeout_seconds in the middle of a streamed answer; the gateway ended the stream with this error as its last event.' },
  gateway_config: { status: 503, summary: 'The gateway\'s config (<local>/executor.yaml) is missing or invalid, or routes to no configured provider.' },
} as const satisfies Record<string, { status: number; summary: string }>;

export type WireErrorCode = keyof typeof WIRE_ERRORS;

/** A refusal a capability (or a projection) answers a client with. */
export class CapabilityError extends Error {
  readonly code: WireErrorCode;
  /** When a refusal that passes (`rate_limited`) may be tried again, in ms from now. */
  readonly retryAfterMs: number | undefined;
  constructor(code: WireErrorCode, message: string, options: { retryAfterMs?: number } = {}) {
    super(message);
    this.name = 'CapabilityError';
    this.code = code;
    this.retryAfterMs = options.retryAfterMs;
  }
  get status(): number {
    return WIRE_ERRORS[this.code].status;
  }
}

/** The body every HTTP error carries; `retry_after_ms` with a refusal that passes. */
export interface WireErrorBody {
  error: { code: WireErrorCode; message: string; retry_after_ms?: number };
}

export function wireErrorBody(code: WireErrorCode, message: string, retryAfterMs?: number): WireErrorBody {
  return { error: { code, message, ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }) } };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
