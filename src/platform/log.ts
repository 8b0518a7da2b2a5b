/**
 * The one logger. Every line goes to stderr: stdout of `mcp` carries protocol frames only.
 * `MAJORDOMUS_LOG=debug|info|warn|error` sets the threshold (default info).
 */

import { settings, type LogLevel } from './settings.js';

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function threshold(): number {
  try {
    return LEVELS[settings().logLevel];
  } catch {
    return LEVELS.info; // the malformed variable is reported by the command line
  }
}

const minimum = threshold();

function write(level: LogLevel, message: string): void {
  if (LEVELS[level] < minimum) return;
  process.stderr.write(`majordomus ${level}: ${message}\n`);
}

export const log = {
  debug: (message: string): void => write('debug', message),
  info: (message: string): void => write('info', message),
  warn: (message: string): void => write('warn', message),
  error: (message: string): void => write('error', message),
};
