/**
 * `majordomus doctor [--json] [--timeout SECONDS]`: why each client does or does not connect
 * (docs/DOCTOR.md). stdout carries the report; exit 0 when every configured client would connect,
 * 1 otherwise.
 */
import { clientConfigs } from '../../init/clients.js';
import { serverCommand } from '../../init/server-command.js';
import { runDoctor } from '../../doctor/doctor.js';
import { doctorExitCode } from '../../doctor/findings.js';
import { renderReport } from '../../doctor/render.js';
import { commandEnvironment } from '../../platform/child-env.js';
import { VERSION } from '../../platform/version.js';
import { integerOption, usageError, type ParsedArgs } from '../args.js';

/** How long a started server may take to answer `initialize` by default: Codex's startup timeout as init writes it. */
const DEFAULT_TIMEOUT_SECONDS = 120;

export async function runDoctorCommand(args: ParsedArgs): Promise<number> {
  if (args.positionals.length > 0) throw usageError(`doctor takes no arguments, not "${args.positionals[0]}"`);
  const timeoutSeconds = integerOption(args.options.timeout, 'timeout', 1, 600, DEFAULT_TIMEOUT_SECONDS);
  const report = await runDoctor({
    cwd: process.cwd(),
    repo: args.global.repo,
    selection: args.global,
    env: commandEnvironment(),
    startTimeoutMs: timeoutSeconds * 1000,
    version: VERSION,
  });
  const text = args.options.json === true ? JSON.stringify(report, null, 2) : renderReport(report, clientConfigs(await serverCommand('path', VERSION)));
  process.stdout.write(`${text}\n`); // -- stdout-ok: the command's answer
  return doctorExitCode(report);
}
