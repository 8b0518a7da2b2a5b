/**
 * What `majordomus doctor` reports: one finding per check, each with a stable check id (listed in
 * docs/DOCTOR.md, read by scripts through `--json`), a status, one line of what was found and,
 * for anything short of ok, the fix. A `fail` is something that keeps a configured client from
 * connecting; `warn` is something to act on that does not (an approval the client will ask for);
 * `info` is context.
 */
import type { ClientId } from '../init/clients.js';

export type FindingStatus = 'ok' | 'info' | 'warn' | 'fail';

/** The checks, by their stable ids. */
export const CHECKS = [
  'repository',
  'clients',
  'client.config',
  'client.command',
  'client.start',
  'client.approval',
  'client.note',
  'layer',
  'lease',
  'guard',
  'node',
  'uws',
] as const;

export type CheckId = (typeof CHECKS)[number];

export interface Finding {
  check: CheckId;
  /** The client a `client.*` finding is about. */
  client?: ClientId;
  status: FindingStatus;
  /** What was found, on one line. */
  message: string;
  /** How to fix it; set on every `fail` and `warn`. */
  fix?: string;
  /** How long it took (the server's start: spawn to the answer of `initialize`). */
  ms?: number;
}

export interface DoctorReport {
  /** True when every configured client would connect: no finding is a `fail`. */
  ok: boolean;
  /** The repository looked at (null outside one). */
  root: string | null;
  /** This majordomus's version. */
  version: string;
  findings: Finding[];
}

/** The exit code of a report: 0 when every configured client would connect, 1 otherwise. */
export function doctorExitCode(report: DoctorReport): number {
  return report.ok ? 0 : 1;
}

export function finding(check: CheckId, status: FindingStatus, message: string, fix?: string): Finding {
  return fix === undefined ? { check, status, message } : { check, status, message, fix };
}
