/** History statements both SQL backends run as written (see named.ts); the append differs (SQLite's statements, Postgres's function). */

export const READ_HISTORY = `
SELECT fold, count, at AS first_at, last_at, gap, body FROM history
WHERE tenant = @tenant AND key = @key AND expires_at > @now ORDER BY id`;

export const HISTORY_KEYS_SINCE = `
SELECT DISTINCT tenant, key FROM history WHERE last_at >= @since AND expires_at > @now LIMIT @limit`;

export const SWEEP_HISTORY = `DELETE FROM history WHERE id IN (SELECT id FROM history WHERE expires_at <= @now LIMIT @batch)`;

export interface HistoryRow {
  fold: string | null;
  count: number | string;
  first_at: number | string;
  last_at: number | string;
  gap: number | string;
  body: string;
}

/** A row back as the run it stores (Postgres answers bigint as text). */
export const runOfRow = (r: HistoryRow) => ({
  fold: r.fold,
  count: Number(r.count),
  first_at: Number(r.first_at),
  last_at: Number(r.last_at),
  gap: Number(r.gap),
});
