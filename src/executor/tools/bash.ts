/**
 * bash: runs a command in the working directory under the floor's masks (mask.ts), after refusing
 * one that names a protected file (command-names.ts); its output is capped and redacted
 * (output-cap.ts, redact.ts). Where masking cannot work, bash refuses every command.
 */
import { z } from 'zod';
import { modelCommandEnvironment } from '../../platform/child-env.js';
import { namedProtectedFile } from '../command-names.js';
import { existingDirectory, homeDirectoriesToMask, killGroup, MASK_FAILURE_EXIT, MASK_FAILURE_MARK, probeMasking, spawnMasked } from '../mask.js';
import { CappedOutput } from '../output-cap.js';
import { refusal } from '../paths.js';
import { defineTool, failure } from './common.js';

export const BASH_DEFAULT_TIMEOUT_SECONDS = 120;
export const BASH_MAX_TIMEOUT_SECONDS = 600;

const schema = z.object({
  command: z.string().trim().min(1).describe('The command, run by /bin/bash -c in the working directory.'),
  timeout: z.number().positive().max(BASH_MAX_TIMEOUT_SECONDS).optional().describe(`Seconds before the command is killed (default ${BASH_DEFAULT_TIMEOUT_SECONDS}, at most ${BASH_MAX_TIMEOUT_SECONDS}).`),
});

export const bashTool = defineTool({
  name: 'bash',
  description: `Run a shell command in the working directory (/bin/bash -c); stdout and stderr together, the middle of a long output cut. Killed after timeout seconds (default ${BASH_DEFAULT_TIMEOUT_SECONDS}). Protected files (.env, keys, credentials) read as empty and commands naming them are refused. Processes left running are killed when the command ends.`,
  schema,
  async run(input, context, { floor, scan }) {
    const support = await probeMasking();
    if (!support.available) return refusal(`bash is disabled: the permission floor cannot mask protected files here because ${support.reason}`);
    const named = namedProtectedFile(input.command, context, floor, scan.files);
    if (named !== undefined) return refusal(named);
    if (context.signal.aborted) return failure('not run: the turn was cancelled');
    const { child, cleanup } = await spawnMasked({
      command: input.command,
      cwd: context.cwd,
      // The executor's environment less its keys and tokens (src/platform/child-env.ts).
      env: modelCommandEnvironment(),
      files: scan.files.map((file) => file.path),
      // The local half as a whole (the lease, sessions, journals), and the user's key directories.
      directories: [...(await existingDirectory(scan.localDirectory)), ...(await homeDirectoriesToMask(context.root))],
    });
    const output = new CappedOutput(scan.redactor.longestBytes);
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
    const seconds = input.timeout ?? BASH_DEFAULT_TIMEOUT_SECONDS;
    let ended: 'timeout' | 'cancelled' | undefined;
    const timer = setTimeout(() => {
      ended = 'timeout';
      killGroup(child);
    }, seconds * 1000);
    const onAbort = (): void => {
      ended ??= 'cancelled';
      killGroup(child);
    };
    context.signal.addEventListener('abort', onAbort, { once: true });
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
    await cleanup();
    if (result.error) return failure(`bash could not start: ${result.error.message}`);
    const text = output.text(scan.redactor);
    if (result.code === MASK_FAILURE_EXIT && text.startsWith(MASK_FAILURE_MARK)) {
      return refusal(`bash is disabled for this command: the permission floor could not mask a file (${text.slice(MASK_FAILURE_MARK.length).trim()})`);
    }
    const body = text === '' ? '(no output)' : text.replace(/\n$/, '');
    if (ended === 'timeout') return failure(`${body}\n[killed: timed out after ${seconds} s]`);
    if (ended === 'cancelled') return failure(`${body}\n[killed: the turn was cancelled]`);
    if (result.code === null) return failure(`${body}\n[killed by ${result.signal ?? 'a signal'}]`);
    return { ok: result.code === 0, output: `${body}\n[exit code ${result.code}]` };
  },
});
