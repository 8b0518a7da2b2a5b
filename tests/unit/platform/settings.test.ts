/**
 * The environment's one reader (src/platform/settings.ts), with the environment passed in.
 * Covers:
 * - `MAJORDOMUS_SPAWN_DEPTH`: unset or empty is none; 0–999 is taken (leading zeros read as the
 *   number); anything else is MAJ_USAGE naming the variable, like every other setting;
 * - `MAJORDOMUS_HTTP_ENGINE`: unset or empty lets the server choose; uws and node force one;
 *   anything else is MAJ_USAGE naming the variable;
 * - the test settings (`MAJORDOMUS_TEST_WATCHDOG_MS`, `_LIVE_SERVER_WAIT_MS`, `_KILL_GRACE_MS`):
 *   unset or empty is the protocol's real timer (5 s each); 50 ms to 10 minutes is taken; anything
 *   else is MAJ_USAGE naming the variable;
 * - the executor's section: its state directory and task, empty meaning unset, frozen;
 * - `MAJORDOMUS_GUARD`: unset or empty is refuse; refuse, warn and off are taken; anything else is
 *   MAJ_USAGE naming the variable;
 * - `MAJORDOMUS_PEER`: unset or empty is nobody; a peer id such as p3 is taken; anything else is
 *   MAJ_USAGE naming the variable and the value;
 * - `majordomus open`'s display: DISPLAY, else WAYLAND_DISPLAY, else none;
 * - secrets by the name of their variable: empty is none; the record view finds a variable by
 *   name and lists nothing;
 * - what children inherit is a copy of the environment as it is at that moment.
 */
import { describe, expect, it } from 'vitest';
import { MajordomusError } from '../../../src/platform/errors.js';
import {
  graphicalDisplay,
  guardSetting,
  inheritableEnvironment,
  peerFromEnvironment,
  readExecutorSettings,
  readSettings,
  SECRETS,
  secretFromEnv,
} from '../../../src/platform/settings.js';

function refusal(read: () => unknown): MajordomusError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(MajordomusError);
    return error as MajordomusError;
  }
  throw new Error('not refused');
}

describe('MAJORDOMUS_SPAWN_DEPTH', () => {
  it('is none when unset or empty, and the number when 0–999', () => {
    expect(readSettings({}).spawnDepth).toBeNull();
    expect(readSettings({ MAJORDOMUS_SPAWN_DEPTH: '' }).spawnDepth).toBeNull();
    expect(readSettings({ MAJORDOMUS_SPAWN_DEPTH: '0' }).spawnDepth).toBe(0);
    expect(readSettings({ MAJORDOMUS_SPAWN_DEPTH: '2' }).spawnDepth).toBe(2);
    expect(readSettings({ MAJORDOMUS_SPAWN_DEPTH: '007' }).spawnDepth).toBe(7);
    expect(readSettings({ MAJORDOMUS_SPAWN_DEPTH: '999' }).spawnDepth).toBe(999);
  });

  it.each(['-1', '1.5', 'one', '1000', ' 1'])('refuses %j naming the variable', (value) => {
    const error = refusal(() => readSettings({ MAJORDOMUS_SPAWN_DEPTH: value }));
    expect(error.code).toBe('MAJ_USAGE');
    expect(error.message).toBe(`MAJORDOMUS_SPAWN_DEPTH=${JSON.stringify(value)} is not an integer 0–999`);
  });
});

describe('MAJORDOMUS_HTTP_ENGINE', () => {
  it('is null (choose) when unset or empty, and forces uws or node', () => {
    expect(readSettings({}).httpEngine).toBeNull();
    expect(readSettings({ MAJORDOMUS_HTTP_ENGINE: '' }).httpEngine).toBeNull();
    expect(readSettings({ MAJORDOMUS_HTTP_ENGINE: 'uws' }).httpEngine).toBe('uws');
    expect(readSettings({ MAJORDOMUS_HTTP_ENGINE: 'node' }).httpEngine).toBe('node');
  });

  it.each(['auto', 'UWS', 'http'])('refuses %j naming the variable', (value) => {
    const error = refusal(() => readSettings({ MAJORDOMUS_HTTP_ENGINE: value }));
    expect(error.code).toBe('MAJ_USAGE');
    expect(error.message).toBe(`MAJORDOMUS_HTTP_ENGINE=${JSON.stringify(value)} is not one of uws, node`);
  });
});

describe('the test settings of the protocol\'s timers', () => {
  const TIMERS = [
    ['MAJORDOMUS_TEST_WATCHDOG_MS', 'watchdogMs'],
    ['MAJORDOMUS_TEST_LIVE_SERVER_WAIT_MS', 'liveServerWaitMs'],
    ['MAJORDOMUS_TEST_KILL_GRACE_MS', 'killGraceMs'],
  ] as const;

  it.each(TIMERS)('%s is the real timer, 5 s, when unset or empty, and the value when 50 ms to 10 minutes', (name, field) => {
    expect(readSettings({})[field]).toBe(5_000);
    expect(readSettings({ [name]: '' })[field]).toBe(5_000);
    expect(readSettings({ [name]: '50' })[field]).toBe(50);
    expect(readSettings({ [name]: '500' })[field]).toBe(500);
    expect(readSettings({ [name]: '600000' })[field]).toBe(600_000);
  });

  it.each(TIMERS.flatMap(([name]) => ['49', '600001', '1.5', '-1', 'fast'].map((value) => [name, value] as const)))('%s refuses %j naming the variable', (name, value) => {
    const error = refusal(() => readSettings({ [name]: value }));
    expect(error.code).toBe('MAJ_USAGE');
    expect(error.message).toBe(`${name}=${JSON.stringify(value)} is not an integer 50–600000`);
  });
});

describe('the executor\'s section', () => {
  it('reads its state directory and task, empty meaning unset, frozen', () => {
    const read = readExecutorSettings({ MAJORDOMUS_EXECUTOR_STATE: '/x', MAJORDOMUS_TASK_ID: 't1' });
    expect(read).toEqual({ stateDir: '/x', taskId: 't1' });
    expect(Object.isFrozen(read)).toBe(true);
    expect(readExecutorSettings({ MAJORDOMUS_EXECUTOR_STATE: '', MAJORDOMUS_TASK_ID: '' })).toEqual({ stateDir: null, taskId: null });
  });
});

describe('guardSetting', () => {
  it('defaults to refuse and takes refuse, warn and off', () => {
    expect(guardSetting({})).toBe('refuse');
    expect(guardSetting({ MAJORDOMUS_GUARD: '' })).toBe('refuse');
    for (const value of ['refuse', 'warn', 'off'] as const) expect(guardSetting({ MAJORDOMUS_GUARD: value })).toBe(value);
  });

  it('refuses anything else naming the variable', () => {
    expect(() => guardSetting({ MAJORDOMUS_GUARD: 'of' })).toThrow(MajordomusError);
    expect(() => guardSetting({ MAJORDOMUS_GUARD: 'OFF' })).toThrow('MAJORDOMUS_GUARD="OFF" is not one of refuse, warn, off');
  });
});

describe('peerFromEnvironment', () => {
  it('is null when MAJORDOMUS_PEER is unset or empty', () => {
    expect(peerFromEnvironment({})).toBeNull();
    expect(peerFromEnvironment({ MAJORDOMUS_PEER: '' })).toBeNull();
  });

  it('takes a peer id', () => {
    expect(peerFromEnvironment({ MAJORDOMUS_PEER: 'p3' })).toBe('p3');
    expect(peerFromEnvironment({ MAJORDOMUS_PEER: 'p120' })).toBe('p120');
  });

  it.each(['3', 'P3', 'p', 'p0', 'p03', 'p3 ', 'overseer', 'p1;rm'])('refuses %j naming the variable', (value) => {
    const error = refusal(() => peerFromEnvironment({ MAJORDOMUS_PEER: value }));
    expect(error.code).toBe('MAJ_USAGE');
    expect(error.message).toContain(`MAJORDOMUS_PEER=${JSON.stringify(value)} is not a peer id`);
  });
});

describe('graphicalDisplay', () => {
  it('is DISPLAY, else WAYLAND_DISPLAY, else none', () => {
    expect(graphicalDisplay({ DISPLAY: ':0', WAYLAND_DISPLAY: 'wayland-0' })).toBe(':0');
    expect(graphicalDisplay({ DISPLAY: '', WAYLAND_DISPLAY: 'wayland-0' })).toBe('wayland-0');
    expect(graphicalDisplay({})).toBeNull();
  });
});

describe('secrets', () => {
  it('answers a variable by its name, none when unset or empty', () => {
    expect(secretFromEnv('KEY', { KEY: 'k-1' })).toBe('k-1');
    expect(secretFromEnv('KEY', { KEY: '' })).toBeNull();
    expect(secretFromEnv('KEY', {})).toBeNull();
  });

  it('finds this process\'s variables by name through the record view, which lists none of them', () => {
    const name = 'MAJORDOMUS_TEST_SETTINGS_SECRET';
    process.env[name] = 'secret-value-4711';
    try {
      expect(SECRETS[name]).toBe('secret-value-4711');
      expect(secretFromEnv(name)).toBe('secret-value-4711');
      expect(Object.keys(SECRETS)).toEqual([]);
      expect(JSON.stringify(SECRETS)).toBe('{}');
    } finally {
      delete process.env[name];
    }
    expect(SECRETS[name]).toBeUndefined();
  });
});

describe('inheritableEnvironment', () => {
  it('copies the environment as it is now, and a change to the copy stays in the copy', () => {
    const name = 'MAJORDOMUS_TEST_SETTINGS_INHERITED';
    process.env[name] = 'now';
    try {
      const copy = inheritableEnvironment();
      expect(copy[name]).toBe('now');
      copy[name] = 'changed';
      expect(process.env[name]).toBe('now');
    } finally {
      delete process.env[name];
    }
    expect(inheritableEnvironment()[name]).toBeUndefined();
  });
});
