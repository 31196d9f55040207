/** Flap statements both SQL backends run as written (see named.ts). */

export const RECORD_FLAP = `INSERT INTO flaps (tenant, key, at, action, expires_at) VALUES (@tenant, @key, @at, @action, @until)`;

/** After a record, in its transaction: the key's transitions too old, or beyond the newest kept. */
export const TRIM_FLAPS = `
DELETE FROM flaps WHERE tenant = @tenant AND key = @key AND (at < @before OR id NOT IN (
  SELECT id FROM flaps WHERE tenant = @tenant AND key = @key ORDER BY id DESC LIMIT @kept))`;

export const FLAP_HISTORY = `SELECT at, action FROM flaps WHERE tenant = @tenant AND key = @key AND at >= @since ORDER BY id`;

export const SWEEP_FLAPS = `DELETE FROM flaps WHERE id IN (SELECT id FROM flaps WHERE expires_at <= @now LIMIT @batch)`;

export interface FlapRow {
  at: number | string;
  action: 'create' | 'close';
}

export const transitionOf = (r: FlapRow) => ({ at: Number(r.at), action: r.action });
