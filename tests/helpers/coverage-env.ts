/**
 * Which processes the tests start write V8 coverage. `vitest run --coverage` sets NODE_V8_COVERAGE
 * (tests/coverage/spawned-coverage-reporter.ts) so that every process of this checkout's executable
 * writes what it ran (docs/COVERAGE.md). Any other node process that inherits it — npm, tsc, an
 * agent CLI, a copy of the package, a script of the tests — collects and writes coverage too, which
 * costs it time and the closing report more files to read, and none of it is counted. So a test
 * starting a process that is not ours gives it `withoutCoverage(...)`.
 */

/** The variable through which Node writes a process's coverage at its exit. */
export const COVERAGE_VARIABLE = 'NODE_V8_COVERAGE';

/**
 * `env` without NODE_V8_COVERAGE: for a process that runs none of this checkout's dist/. The name
 * stays, set to undefined: node's child_process copies its own NODE_V8_COVERAGE into a child's
 * environment that lacks the name (so that coverage follows every node child), and leaves out one
 * set to undefined.
 */
export function withoutCoverage(env: Readonly<NodeJS.ProcessEnv> = process.env): NodeJS.ProcessEnv {
  return { ...env, [COVERAGE_VARIABLE]: undefined };
}
