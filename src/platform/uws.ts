/**
 * Whether uWebSockets.js's native binary loads on this Node.js, and why not in one line: the one
 * answer the HTTP engine chooses by (src/http/engine.ts) and `doctor` reports (src/doctor/).
 * uWS is a native addon; its binary for Node 24 needs glibc 2.38, which Debian 12 lacks.
 */
import { createRequire } from 'node:module';
import { errorMessage } from './errors.js';

/** The package that provides uWebSockets.js (docs/DECISIONS.md, "uWebSockets.js for Node 20, 22 and 24"). */
export const UWS_PACKAGE = '@based/uws';

/**
 * Null when uWS loads here, else why not. Loaded with `require`, not `import()`: under Node 20 a
 * CommonJS module that throws while imported is also reported as an uncaught error, which ends a
 * thread even though the import's rejection was caught. A later `import` finds it loaded.
 */
export function uwsLoadProblem(): string | null {
  try {
    createRequire(import.meta.url)(UWS_PACKAGE);
    return null;
  } catch (error) {
    return whyUwsCannotLoad(errorMessage(error));
  }
}

/**
 * One line from the loader's error: uws.js wraps the system's (`…libc.so.6: version
 * \`GLIBC_2.38' not found (required by …/uws_linux_x64_137.node)`) after a paragraph of advice.
 */
export function whyUwsCannotLoad(message: string): string {
  const runtime = `Node.js ${process.versions.node.split('.')[0]}`;
  const glibc = /`(GLIBC_[\d.]+)' not found/.exec(message);
  if (glibc) return `uWebSockets.js cannot load on this system (its binary for ${runtime} needs ${glibc[1]})`;
  const cause = message.split('\n\n').at(-1)?.split('\n')[0]?.trim() ?? message;
  return `uWebSockets.js cannot load on this system (${runtime}: ${cause})`;
}
