import type { StoredHistoryEvent } from '../store/contract/index.js';

const isCreate = (e: StoredHistoryEvent) => e.type === 'decision' && e.decision === 'CREATE';
const lostTheRace = (e: StoredHistoryEvent) => e.type === 'decision' && e.decision === 'SUPPRESS' && e.reason === 'lost_race';

/**
 * A key's events with each CREATE before the copies that lost the race to it.
 *
 * Events are written after their steps, by each replica in batches of its
 * own, so two decisions of one key made a moment apart can be written in
 * either order: a copy answered by another replica, or on another database
 * connection, can be written just before the CREATE it lost to. Such a copy
 * (SUPPRESS `lost_race`) is decided after that CREATE by definition, so a
 * CREATE found right after copies like it is put before them, with the route
 * written after it. Nothing else moves; a CREATE after an expiry stays where
 * it is (the copies before an expiry belong to the life that expired).
 */
export function inDecidedOrder(events: readonly StoredHistoryEvent[]): StoredHistoryEvent[] {
  const out = events.slice();
  for (let i = 0; i < out.length; i++) {
    if (!isCreate(out[i]!)) continue;
    const end = out[i + 1]?.type === 'routed' ? i + 2 : i + 1;
    let to = i;
    while (to > 0 && lostTheRace(out[to - 1]!)) to--;
    if (to < i) out.splice(to, 0, ...out.splice(i, end - i));
    i = end - 1;
  }
  return out;
}
