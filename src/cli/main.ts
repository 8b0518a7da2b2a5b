#!/usr/bin/env node
/**
 * The executable. It parses the command line and loads only the command it runs: a bridging
 * `mcp` must start fast, so nothing heavy is imported here.
 */
import { EXIT, MajordomusError, errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';
import { parseCommandLine, type ParsedArgs } from './args.js';
import { settings } from '../platform/settings.js';

async function run(args: ParsedArgs): Promise<number> {
  settings(); // a malformed MAJORDOMUS_* variable is refused before anything starts
  const mcpSession = args.command === 'mcp' && !args.help && !args.version && args.options.inspect !== true;
  if (!mcpSession) (await import('./closed-stdout.js')).endWhenStdoutCloses();
  if (args.version) {
    const { VERSION } = await import('../platform/version.js');
    process.stdout.write(`${VERSION}\n`); // -- stdout-ok: the command's answer
    return EXIT.ok;
  }
  if (args.help || args.command === null) {
    const { HELP } = await import('./help.js');
    process.stdout.write(`${HELP[args.command ?? 'main']}\n`); // -- stdout-ok: the command's answer
    return args.command === null && !args.help ? EXIT.usage : EXIT.ok;
  }
  switch (args.command) {
    case 'mcp':
      return (await import('./commands/mcp.js')).runMcp(args);
    case 'serve':
      return (await import('./commands/serve.js')).runServe(args);
    case 'capabilities':
      return (await import('./commands/capabilities.js')).runCapabilities(args);
    case 'generate':
      return (await import('./commands/generate.js')).runGenerate(args);
    case 'exec':
      return (await import('./commands/exec.js')).runExec(args);
    case 'guard':
      return (await import('./commands/guard.js')).runGuardCommand(args);
    case 'init':
      return (await import('./commands/init.js')).runInit(args);
    case 'open':
      return (await import('./commands/open.js')).runOpen(args);
    case 'doctor':
      return (await import('./commands/doctor.js')).runDoctorCommand(args);
  }
}

async function main(): Promise<void> {
  let code: number;
  try {
    code = await run(parseCommandLine(process.argv.slice(2)));
  } catch (error) {
    if (error instanceof MajordomusError) {
      log.error(`${error.code}: ${error.message}`);
      code = error.exitCode;
    } else {
      log.error(`MAJ_INTERNAL: ${error instanceof Error ? (error.stack ?? error.message) : errorMessage(error)}`);
      code = EXIT.internal;
    }
  }
  // Exit even if stdin is still open (a signal ended the session); stdout is written synchronously
  // to pipes and files. Whatever path led here, an HTTP thread still running is stopped first.
  const { runExitHooks } = await import('../platform/exit-hooks.js');
  await runExitHooks();
  process.exit(code);
}

await main();
