import { createHash } from 'node:crypto';

/**
 * What names a key at a destination, across tenants. Two tenants can have the
 * same fault and so the same key; a receiver that deduplicates by
 * Idempotency-Key, or PagerDuty by dedup_key, would otherwise take the second
 * tenant's ticket for a repeat of the first, or let one tenant's resolve close
 * the other's page. The `default` tenant's keys stay as they are (what a
 * single-tenant deployment has always sent); every other tenant's are
 * `<tenant>/<key>`, and so is a default key that holds a `/` itself. Tenant ids
 * hold no `/`, so the text before the first `/` is always the tenant: no two
 * (tenant, key) pairs share an identity.
 */
export function deliveryIdentity(tenant: string, key: string): string {
  return tenant === 'default' && !key.includes('/') ? key : `${tenant}/${key}`;
}

/** PagerDuty's dedup_key is at most 255 characters: a longer identity is sent as its SHA-256 (stable, so upserts still meet). */
export const PAGERDUTY_DEDUP_MAX = 255;

export function pagerdutyDedupKey(tenant: string, key: string): string {
  const id = deliveryIdentity(tenant, key);
  return id.length <= PAGERDUTY_DEDUP_MAX ? id : `onceonly-sha256-${createHash('sha256').update(id).digest('hex')}`;
}
