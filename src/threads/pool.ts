/** The contract between the HTTP thread and the pool threads (piscina, workers/pool-task.ts). Types only. */

/** A pool task: run one capability over the snapshot. */
export interface PoolTask {
  capabilityId: string;
  input: unknown;
  caller: string | null;
}

/**
 * What the HTTP thread sends a pool thread: a batch of calls and the generation they run over. A
 * pool thread that holds another generation decodes this one's snapshot first (once per
 * generation), so no call of a new generation is answered from an old one.
 */
export interface PoolBatch {
  generation: number;
  snapshot: SharedArrayBuffer;
  tasks: PoolTask[];
}

export interface PoolWorkerData {
  snapshot: SharedArrayBuffer;
  /** The nice value the pool threads take (0: keep the default priority). */
  nice: number;
  /** `MAJORDOMUS_FAULT`'s capability, made to throw (tests). */
  faultCapability: string | null;
}
