/**
 * Whether uWebSockets.js's native binary loads on this Node.js (src/platform/uws.ts decides, as
 * the HTTP engine does), asked in a child process: a native module that fails to load, or
 * crashes, must not take the doctor with it. Information, not a failure: when the binary does not
 * load, the server's HTTP projection runs on node:http.
 */
import { execFile } from 'node:child_process';
import { commandEnvironment } from '../platform/child-env.js';
import { UWS_PACKAGE } from '../platform/uws.js';
import { finding, type Finding } from './findings.js';

// Asks the same module the engine asks; prints its verdict as the last line (a module may print while it loads).
const PROBE = `const { uwsLoadProblem } = await import(process.argv[1]);
process.stdout.write('\\n' + JSON.stringify({ problem: uwsLoadProblem() })); // -- stdout-ok: the probe child's answer, read by doctor`;

export async function uwsFinding(): Promise<Finding> {
  const answer = await new Promise<{ stdout: string; stderr: string; error: Error | null }>((resolve) => {
    const module = new URL('../platform/uws.js', import.meta.url).href;
    execFile(process.execPath, ['--input-type=module', '-e', PROBE, module], { env: commandEnvironment(), timeout: 30_000, encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, error }),
    );
  });
  let problem: string | null | undefined;
  try {
    problem = (JSON.parse(answer.stdout.trim().split('\n').at(-1) ?? '') as { problem: string | null }).problem;
  } catch {
    problem = undefined;
  }
  if (problem === null) return finding('uws', 'ok', `uWebSockets.js (${UWS_PACKAGE}) loads on Node.js ${process.versions.node}: HTTP is served by uWebSockets.js`);
  const why = problem ?? (answer.stderr.split('\n').find((line) => line.trim() !== '') ?? answer.error?.message ?? 'the check did not answer').trim();
  return finding('uws', 'info', `${why}: HTTP is served by node:http, slower but the same`);
}
