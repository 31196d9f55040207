/**
 * Device-event statements. `applyEvent` runs them in one BEGIN IMMEDIATE
 * transaction (group commit): seen-marker, device state, boots and the
 * notification commit together or not at all.
 */

/** in: tenant, device, boot, sequence, now. A live seen-marker means duplicate. */
export const SEEN = `SELECT 1 FROM events_seen WHERE tenant = ? AND device = ? AND boot = ? AND sequence = ? AND expires_at > ?`;

/** in: tenant, device. */
export const DEVICE = `SELECT tenant, device, boot, sequence, state, observed_at AS observedAt FROM devices WHERE tenant = ? AND device = ?`;

/** in: tenant or null (all), limit. Least recently observed first, with the device's gaps. */
export const LIST_DEVICES = `
SELECT d.tenant, d.device, d.boot, d.sequence, d.state, d.observed_at AS observedAt, coalesce(g.gaps, 0) AS gaps
  FROM devices d LEFT JOIN device_gaps g ON g.tenant = d.tenant AND g.device = d.device
 WHERE (@tenant IS NULL OR d.tenant = @tenant) ORDER BY d.observed_at LIMIT @limit`;

/** in: tenant, device, missing sequence numbers. */
export const ADD_GAPS = `
INSERT INTO device_gaps (tenant, device, gaps) VALUES (?, ?, ?)
ON CONFLICT (tenant, device) DO UPDATE SET gaps = gaps + excluded.gaps`;

/** in: tenant, device, boot. */
export const BOOT_SEEN = `SELECT 1 FROM device_boots WHERE tenant = ? AND device = ? AND boot = ?`;

export const UPSERT_DEVICE = `
INSERT INTO devices (tenant, device, boot, sequence, state, observed_at)
VALUES (@tenant, @device, @boot, @sequence, @state, @observedAt)
ON CONFLICT (tenant, device) DO UPDATE SET
  boot = excluded.boot, sequence = excluded.sequence, state = excluded.state, observed_at = excluded.observed_at`;

export const ADD_BOOT = `INSERT OR IGNORE INTO device_boots (tenant, device, boot) VALUES (?, ?, ?)`;

/** A marker that expired but was not swept yet is simply renewed. */
export const MARK_SEEN = `INSERT OR REPLACE INTO events_seen (tenant, device, boot, sequence, expires_at) VALUES (?, ?, ?, ?, ?)`;


/** in: observedBefore. */
export const COUNT_STALE = `SELECT count(*) AS n FROM devices WHERE observed_at < ?`;


/** in: now, batch. */
export const SWEEP_SEEN = `
DELETE FROM events_seen WHERE (tenant, device, boot, sequence) IN (
  SELECT tenant, device, boot, sequence FROM events_seen WHERE expires_at <= ? LIMIT ?)`;
