/**
 * Adoption after a crash or a takeover: what earlier servers left under `<local>/state/harness/`
 * joins the table at start. Finished turns stay readable; a turn whose owner died is `lost`, and
 * its process group — verified by pid, group and start time, so a reused pid is never signalled —
 * is killed. Sessions of a live owner are never touched.
 */
import { processGroupOf, startTicksOf } from '../platform/proc.js';
import { groupAlive, isAlive, signalGroup } from './process.js';
import { endedTurn, type Turn } from './session.js';
import type { SessionTable } from './session-table.js';
import type { SessionRecord } from './store.js';

export interface Adoption {
  adopted: number;
  lost: number;
  killed: number;
}

/** Adopts every session on disk whose owner is gone into `table`; answers what it found. */
export async function adoptSessions(table: SessionTable): Promise<Adoption> {
  const { store } = table;
  let adopted = 0;
  let lost = 0;
  let killed = 0;
  for (const stored of await store.readAll()) {
    const { record } = stored;
    const ownerAlive = record.ownerPid !== process.pid && isAlive(record.ownerPid) && (record.ownerStartTicks === null || startTicksOf(record.ownerPid) === record.ownerStartTicks);
    if (ownerAlive) continue;
    const turns: Turn[] = [];
    for (const { turn, done } of stored.turns) {
      let outcome = done;
      if (outcome === null) {
        if (turn === record.turn && record.pid !== null && record.pgid !== null && sameProcess(record)) {
          signalGroup(record.pgid, 'SIGKILL');
          killed += 1;
        }
        outcome = {
          turn,
          status: 'lost',
          exitCode: null,
          signal: null,
          answer: null,
          error: 'the server that ran this turn ended while it was running',
          startedAt: turn === record.turn ? record.startedAt : record.createdAt,
          endedAt: new Date().toISOString(),
        };
        await store.writeDone(record.session, outcome);
        lost += 1;
      }
      turns.push(endedTurn(outcome));
    }
    if (turns.length === 0) continue;
    record.ownerPid = process.pid;
    record.ownerStartTicks = startTicksOf(process.pid);
    await store.saveRecord(record);
    table.add({ record, turns, launching: null, argv: [], envNames: [] });
    adopted += 1;
  }
  return { adopted, lost, killed };
}

/** Whether the record's turn process (or, its leader gone, its group) is still the one it started. */
function sameProcess(record: SessionRecord): boolean {
  if (record.pid === null || record.pgid === null) return false;
  const ticks = startTicksOf(record.pid);
  if (ticks === null) return groupAlive(record.pgid) && processGroupOf(record.pgid) === null; // leader gone, group members left
  return ticks === record.startTicks && processGroupOf(record.pid) === record.pgid;
}
