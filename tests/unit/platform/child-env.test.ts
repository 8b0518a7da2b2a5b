/**
 * What a child process inherits and is given (src/platform/child-env.ts). Covers:
 * - a command run on this process's behalf inherits everything, git's variables of a hook
 *   included, and the copy is the child's own;
 * - git inherits everything too but coverage, and never takes an optional lock or prompts;
 * - a command an executor's model runs loses every variable named like a secret, and coverage;
 * - an agent loses the role variables it could inherit (depth, task, state directory, peer), then
 *   gets its profile's env, then its depth (and an executor its task and state directory), which
 *   no profile can override; the names shown are the profile's and the harness's, sorted;
 * - `NODE_V8_COVERAGE` reaches the children that may run majordomus's own code (a command run on
 *   this process's behalf, the executor) and no other (git, a model's command, an agent CLI) — in
 *   a real node child too, to which node would hand its own were the name simply left out;
 * - by default each builder reads this process's environment as it is at that moment.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentEnvironment, commandEnvironment, gitEnvironment, modelCommandEnvironment } from '../../../src/platform/child-env.js';

const SERVER = Object.freeze({
  PATH: '/usr/bin:/bin',
  HOME: '/home/user',
  GIT_INDEX_FILE: '/repo/.git/next-index',
  OPENAI_API_KEY: 'sk-1',
  GITHUB_TOKEN: 'gh-1',
  DB_PASSWORD: 'pw',
  MONKEY: 'not a secret',
  NODE_V8_COVERAGE: '/coverage/.spawned',
  MAJORDOMUS_LOG: 'debug',
  MAJORDOMUS_SPAWN_DEPTH: '1',
  MAJORDOMUS_TASK_ID: 'task-of-the-server',
  MAJORDOMUS_EXECUTOR_STATE: '/state/of/the/server',
  MAJORDOMUS_PEER: 'p3',
});

describe('a command run on this process\'s behalf', () => {
  it('inherits everything, in a copy of its own', () => {
    const env = commandEnvironment(SERVER);
    expect(env).toEqual(SERVER);
    env.PATH = '/elsewhere';
    expect(SERVER.PATH).toBe('/usr/bin:/bin');
  });

  it('runs git with the hook\'s variables, without coverage, never an optional lock, never a prompt', () => {
    expect(gitEnvironment(SERVER)).toEqual({ ...SERVER, NODE_V8_COVERAGE: undefined, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' });
    expect(gitEnvironment({ GIT_OPTIONAL_LOCKS: '1' }).GIT_OPTIONAL_LOCKS).toBe('0');
  });
});

describe('a command an executor\'s model runs', () => {
  it('loses every variable named like a secret, and coverage (it is not ours), nothing else', () => {
    const env = modelCommandEnvironment(SERVER);
    for (const name of ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'DB_PASSWORD']) expect(env).not.toHaveProperty(name);
    expect(env.NODE_V8_COVERAGE).toBeUndefined();
    for (const name of ['PATH', 'HOME', 'MONKEY', 'MAJORDOMUS_SPAWN_DEPTH', 'MAJORDOMUS_TASK_ID']) expect(env[name]).toBe(SERVER[name as keyof typeof SERVER]);
  });
});

describe('an agent', () => {
  it('loses the role variables and coverage, then gets its profile\'s env, then its depth', () => {
    const { env, names } = agentEnvironment({ depth: 2 }, { FAKE_AGENT_LOG: '/log', MAJORDOMUS_LOG: 'warn' }, SERVER);
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/user',
      GIT_INDEX_FILE: '/repo/.git/next-index',
      OPENAI_API_KEY: 'sk-1',
      GITHUB_TOKEN: 'gh-1',
      DB_PASSWORD: 'pw',
      MONKEY: 'not a secret',
      NODE_V8_COVERAGE: undefined,
      MAJORDOMUS_LOG: 'warn',
      FAKE_AGENT_LOG: '/log',
      MAJORDOMUS_SPAWN_DEPTH: '2',
    });
    expect(names).toEqual(['FAKE_AGENT_LOG', 'MAJORDOMUS_LOG', 'MAJORDOMUS_SPAWN_DEPTH']);
  });

  it('gives an executor its task and state directory, which no profile overrides, and coverage (it is ours)', () => {
    const { env, names } = agentEnvironment({ depth: 1, taskId: 's-1', stateDir: '/sessions/s-1', ours: true }, { MAJORDOMUS_TASK_ID: 'forged', MAJORDOMUS_SPAWN_DEPTH: '0' }, SERVER);
    expect(env).toMatchObject({ MAJORDOMUS_SPAWN_DEPTH: '1', MAJORDOMUS_TASK_ID: 's-1', MAJORDOMUS_EXECUTOR_STATE: '/sessions/s-1', NODE_V8_COVERAGE: '/coverage/.spawned' });
    expect(env).not.toHaveProperty('MAJORDOMUS_PEER');
    expect(names).toEqual(['MAJORDOMUS_EXECUTOR_STATE', 'MAJORDOMUS_SPAWN_DEPTH', 'MAJORDOMUS_TASK_ID']);
  });

  it('may be named a peer by its profile, never by the server it was spawned from', () => {
    expect(agentEnvironment({ depth: 1 }, {}, SERVER).env).not.toHaveProperty('MAJORDOMUS_PEER');
    expect(agentEnvironment({ depth: 1 }, { MAJORDOMUS_PEER: 'p9' }, SERVER).env.MAJORDOMUS_PEER).toBe('p9');
  });
});

describe('coverage in a real child', () => {
  it('reaches a node child of a command run on our behalf, and not one of a model\'s command, git\'s or an agent\'s', () => {
    const dir = mkdtempSync(join(tmpdir(), 'majordomus-child-coverage-'));
    const before = process.env.NODE_V8_COVERAGE;
    process.env.NODE_V8_COVERAGE = dir;
    const seen = (env: Record<string, string | undefined>): string =>
      execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.NODE_V8_COVERAGE))'], { env, encoding: 'utf8' });
    try {
      expect(seen(commandEnvironment())).toBe(dir);
      expect(seen(agentEnvironment({ depth: 1, ours: true }).env)).toBe(dir);
      expect(seen(modelCommandEnvironment())).toBe('undefined');
      expect(seen(gitEnvironment())).toBe('undefined');
      expect(seen(agentEnvironment({ depth: 1 }).env)).toBe('undefined');
    } finally {
      if (before === undefined) delete process.env.NODE_V8_COVERAGE;
      else process.env.NODE_V8_COVERAGE = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('by default', () => {
  it('builds from this process\'s environment as it is at that moment', () => {
    const name = 'MAJORDOMUS_TEST_CHILD_ENV';
    process.env[name] = 'now';
    process.env.MAJORDOMUS_TEST_CHILD_TOKEN = 'hidden';
    try {
      expect(commandEnvironment()[name]).toBe('now');
      expect(gitEnvironment()[name]).toBe('now');
      expect(modelCommandEnvironment()[name]).toBe('now');
      expect(modelCommandEnvironment()).not.toHaveProperty('MAJORDOMUS_TEST_CHILD_TOKEN');
      expect(agentEnvironment({ depth: 1 }).env[name]).toBe('now');
    } finally {
      delete process.env[name];
      delete process.env.MAJORDOMUS_TEST_CHILD_TOKEN;
    }
    expect(commandEnvironment()).not.toHaveProperty(name);
  });
});
