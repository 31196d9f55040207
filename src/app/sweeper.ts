import type { DedupStore } from '../store/contract/index.js';

/** Batches one sweep pass may take at most (each deletes up to SWEEP_BATCH rows of each kind). */
export const SWEEP_ROUNDS = 100;

/**
 * Sweeps until nothing expired is left, a bounded batch per transaction: one
 * batch a pass fell behind any load that expires more than a batch per
 * interval (a soak at 700 requests/s expired 20,000 incidents a minute
 * against 1,000 swept, and the file grew without end). Between batches
 * decisions get the store; a pass stops after SWEEP_ROUNDS batches, so one
 * pass is bounded too and the next interval goes on; a stopping server ends
 * it after the batch in hand.
 */
export async function sweepUntilDone(store: Pick<DedupStore, 'sweepExpired'>, stopped: () => boolean = () => false, rounds = SWEEP_ROUNDS): Promise<number> {
  let total = 0;
  for (let round = 0; round < rounds && !stopped(); round++) {
    const n = await store.sweepExpired();
    total += n;
    if (n === 0) break;
    await new Promise((r) => setImmediate(r));
  }
  return total;
}
