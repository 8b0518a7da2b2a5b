/**
 * A command whose stdout reader went away (`majordomus capabilities list | head -1`) has nobody
 * left to answer: it ends quietly with exit 0 instead of dying on an unhandled EPIPE with a stack
 * trace. Not for an `mcp` session: its stdout is the client's channel (src/mcp/stdio.ts ends the
 * session), and an owner whose client has gone may still serve peers.
 */
import { EXIT, errorMessage } from '../platform/errors.js';
import { log } from '../platform/log.js';

/** Ends the process when writing to stdout fails: quietly (0) when the reader closed it. */
export function endWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      log.debug('stdout closed (EPIPE): the reader has gone; ending');
      process.exit(EXIT.ok);
    }
    log.error(`MAJ_INTERNAL: cannot write to stdout: ${errorMessage(error)}`);
    process.exit(EXIT.internal);
  });
}
