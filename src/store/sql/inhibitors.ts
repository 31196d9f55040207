/** Inhibitor statements both SQL backends run as written (see named.ts). */

export const PUT_INHIBITOR = `
INSERT INTO inhibitors (tenant, rule, tuple, source, expires_at) VALUES (@tenant, @rule, @tuple, @source, @expiresAt)
ON CONFLICT (tenant, rule, tuple, source) DO UPDATE SET expires_at = excluded.expires_at`;

export const FIND_INHIBITORS = `
SELECT source FROM inhibitors WHERE tenant = @tenant AND rule = @rule AND tuple = @tuple AND expires_at > @now ORDER BY expires_at DESC LIMIT @limit`;

export const REMOVE_INHIBITOR = `DELETE FROM inhibitors WHERE tenant = @tenant AND source = @source`;

export const SWEEP_INHIBITORS = `
DELETE FROM inhibitors WHERE (tenant, rule, tuple, source) IN (SELECT tenant, rule, tuple, source FROM inhibitors WHERE expires_at <= @now LIMIT @batch)`;
