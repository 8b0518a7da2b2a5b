/**
 * A turn as an MCP task (src/harness/turn-task.ts), with `with_config` folding and profile ids
 * beside it. Covers:
 * - a task id is `<session>:<turn>`; anything else names no task (`not_found`);
 * - a turn's state as its task's: running is working, exited completed (whatever its answer),
 *   killed and steered cancelled, lost failed, with a message naming the turn and its outcome;
 * - waiting for a turn's end resolves at its end, at the deadline, or when the caller cancels;
 * - with_config: a list of overlays folds in order (the later wins), one object is a list of one,
 *   any key but model, effort and mode is refused;
 * - profile ids: `/`-separated segments (`team/claude-worker`), nothing empty or dot-led.
 */
import { describe, expect, it } from 'vitest';
import { foldOverlays } from '../../../src/harness/launching.js';
import { endedTurn, type Session, type Turn } from '../../../src/harness/session.js';
import type { TurnDone } from '../../../src/harness/store.js';
import { parseTurnTaskId, turnTaskState, untilTurnEnds } from '../../../src/harness/turn-task.js';
import { PROFILE_ID } from '../../../src/layer/kinds.js';

const SESSION = '1a3615c8-5dfa-4613-892b-fe27f25e0f9d';

function done(turn: number, status: TurnDone['status'], exitCode: number | null = 0): TurnDone {
  return { turn, status, exitCode, signal: null, answer: null, error: null, startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:05.000Z' };
}

function running(turn: number): Turn {
  return { ...endedTurn(done(turn, 'exited')), status: 'running', done: null };
}

const session = (...turns: Turn[]): Session => ({ record: { session: SESSION } as Session['record'], turns, launching: null, argv: [], envNames: [] });

describe('a turn as an MCP task', () => {
  it('reads a task id as <session>:<turn> and refuses anything else as not_found', () => {
    expect(parseTurnTaskId(`${SESSION}:12`)).toEqual({ session: SESSION, turn: 12 });
    for (const bad of [SESSION, `${SESSION}:0`, `${SESSION}:x`, 'nope:1', `${SESSION}:1.5`]) {
      expect(() => parseTurnTaskId(bad), bad).toThrow(expect.objectContaining({ code: 'not_found' }));
    }
  });

  it('takes its status from the turn: working, completed, cancelled or failed, with the outcome named', () => {
    const entry = session(running(1));
    expect(turnTaskState(entry, running(1))).toEqual({ taskId: `${SESSION}:1`, status: 'working', statusMessage: 'turn 1 running', createdAt: '2026-01-01T00:00:00.000Z', lastUpdatedAt: '2026-01-01T00:00:00.000Z' });
    expect(turnTaskState(entry, endedTurn(done(2, 'exited', 3)))).toMatchObject({ status: 'completed', statusMessage: 'turn 2 exited 3', lastUpdatedAt: '2026-01-01T00:00:05.000Z' });
    expect(turnTaskState(entry, endedTurn(done(2, 'killed', null)))).toMatchObject({ status: 'cancelled', statusMessage: 'turn 2 killed' });
    expect(turnTaskState(entry, endedTurn(done(2, 'steered', null)))).toMatchObject({ status: 'cancelled', statusMessage: 'turn 2 steered' });
    expect(turnTaskState(entry, endedTurn(done(2, 'lost', null)))).toMatchObject({ status: 'failed', statusMessage: 'turn 2 lost: the server running it stopped' });
  });

  it('waits for a turn\'s end, its deadline, or the caller\'s cancel, whichever comes first', async () => {
    const turn = running(1);
    const ended = untilTurnEnds(turn, Date.now() + 60_000);
    turn.status = 'exited';
    for (const listener of turn.listeners) listener();
    await ended;
    expect(turn.listeners.size).toBe(0);

    const started = Date.now();
    await untilTurnEnds(running(2), Date.now() + 50);
    expect(Date.now() - started).toBeLessThan(5_000);

    const cancel = new AbortController();
    const waiting = untilTurnEnds(running(3), Date.now() + 60_000, cancel.signal);
    cancel.abort();
    await waiting;
  });
});

describe('with_config as hyprpilot writes it', () => {
  it('folds a list of overlays in order, takes one object as a list of one, and refuses any other key', () => {
    expect(foldOverlays([{ model: 'a', effort: 'low' }, { model: 'b' }, { mode: 'plan' }])).toEqual({ model: 'b', effort: 'low', mode: 'plan' });
    expect(foldOverlays({ model: 'c' })).toEqual({ model: 'c' });
    expect(foldOverlays(undefined)).toEqual({});
    expect(() => foldOverlays([{ model: 'a' }, { command: 'x', args: 'y' }, { command: 'z' }])).toThrow('with_config may set only model, effort and mode; remove "command", "args"');
  });
});

describe('profile ids', () => {
  it('takes segments joined by /, each led by a letter or digit', () => {
    for (const id of ['worker', 'team/claude-worker', 'personal/kilic/glm-5.2', 'a_b.c']) expect(PROFILE_ID.test(id), id).toBe(true);
    for (const id of ['/lead', 'trail/', 'a//b', 'a/.hidden', '-dash', 'a b', '']) expect(PROFILE_ID.test(id), id).toBe(false);
  });
});
