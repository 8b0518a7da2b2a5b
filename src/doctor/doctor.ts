/**
 * `majordomus doctor`: why a client does or does not connect. For each client, its configuration,
 * its command, a real start answering `initialize`, and the approval or trust it needs; then what
 * every client shares: the layer, the lease, the git guard, Node.js and uWS. Reads the user's
 * client files; writes nothing but what a started server itself writes in the repository.
 */
import { clientConfigs, type EntryCommand } from '../init/clients.js';
import { initRoot } from '../init/root.js';
import { serverCommand } from '../init/server-command.js';
import type { LayerSelection } from '../layer/load.js';
import type { ChildEnv } from '../platform/child-env.js';
import { errorMessage } from '../platform/errors.js';
import { clientFindings, type StartOnce } from './client-checks.js';
import { finding, type DoctorReport, type Finding } from './findings.js';
import { guardFinding } from './guard-check.js';
import { layerFinding } from './layer-check.js';
import { leaseFindings } from './lease-check.js';
import { nodeFinding } from './node-check.js';
import { startAndInitialize, type StartResult } from './server-start.js';
import { uwsFinding } from './uws-check.js';

export interface DoctorOptions {
  cwd: string;
  /** `--repo DIR`, as `init` takes it. */
  repo: string | undefined;
  selection: LayerSelection;
  /** The environment the user's clients start with (this process's). */
  env: ChildEnv;
  /** How long a started server may take to answer `initialize`. */
  startTimeoutMs: number;
  version: string;
}

/** Starts each distinct command once (same command, arguments and env), in the repository. */
function startOnce(root: string, env: ChildEnv, timeoutMs: number): StartOnce {
  const started = new Map<string, Promise<StartResult>>();
  let queue: Promise<unknown> = Promise.resolve();
  return (entry: EntryCommand) => {
    const key = JSON.stringify([entry.command, entry.args, Object.entries(entry.env).sort()]);
    const earlier = started.get(key);
    if (earlier !== undefined) return earlier.then((result) => ({ ...result, again: true }));
    // One at a time: two servers starting together would race for the lease.
    const result = queue.then(() => startAndInitialize(entry, root, env, timeoutMs));
    queue = result.catch(() => undefined);
    started.set(key, result);
    return result.then((first) => ({ ...first, again: false }));
  };
}

async function repositoryFindings(root: string, options: DoctorOptions): Promise<Finding[]> {
  // The layer and the lease as the user has them, before a start of ours changes the lease.
  const layer = await layerFinding(root, options.selection);
  const lease = layer.status === 'fail' ? [] : await leaseFindings(root);
  const findings: Finding[] = [];
  const start = startOnce(root, options.env, options.startTimeoutMs);
  let configured = 0;
  // The entries init would write by default; doctor reads only the files, paths and readers.
  for (const config of clientConfigs(await serverCommand('path', options.version))) {
    const client = await clientFindings(config, { root, env: options.env, start });
    if (client.configured) configured += 1;
    findings.push(...client.findings);
  }
  if (configured === 0) findings.push(finding('clients', 'fail', `no client configuration in ${root} names majordomus`, 'run `majordomus init` in the repository'));
  findings.push(layer, ...lease, await guardFinding(root));
  return findings;
}

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const runtime = Promise.all([nodeFinding(), uwsFinding()]);
  let root: string | null = null;
  const findings: Finding[] = [];
  try {
    root = await initRoot(options.repo, options.cwd);
  } catch (error) {
    findings.push(finding('repository', 'fail', errorMessage(error), 'run majordomus doctor inside the repository (or name it with --repo DIR)'));
  }
  if (root !== null) {
    findings.push(finding('repository', 'ok', `the repository at ${root}`));
    findings.push(...(await repositoryFindings(root, options)));
  }
  findings.push(...(await runtime));
  return { ok: !findings.some((found) => found.status === 'fail'), root, version: options.version, findings };
}
