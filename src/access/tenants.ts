import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** One tenant: its id, its bearer tokens, its request budget. */
export const tenantConfig = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1..128 letters, digits, _, . or -'),
  tokens: z.array(z.string().min(16, 'use at least 16 characters').max(512)).min(1),
  /** a token bucket per tenant and replica: `per_second` sustained, `burst` at once */
  rate_limit: z
    .strictObject({ per_second: z.number().positive().default(500), burst: z.number().int().positive().default(1000) })
    .default({ per_second: 500, burst: 1000 }),
});
export type TenantConfig = z.output<typeof tenantConfig>;

export const tenantsConfig = z
  .array(tenantConfig)
  .default([])
  .superRefine((list, ctx) => {
    const ids = new Set<string>();
    const tokens = new Set<string>();
    list.forEach((t, i) => {
      if (ids.has(t.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `tenant id ${JSON.stringify(t.id)} is used twice` });
      ids.add(t.id);
      t.tokens.forEach((tok, j) => {
        // The message never repeats the token: config errors are printed and logged.
        if (tokens.has(tok))
          ctx.addIssue({ code: 'custom', path: [i, 'tokens', j], message: 'this token is already given to a tenant; each token belongs to one tenant' });
        tokens.add(tok);
      });
    });
  });

/** An event for another tenant than the caller's (403, nothing changed). */
export class ForbiddenError extends Error {
  readonly code = 'forbidden';
  override name = 'ForbiddenError';
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Who a token belongs to. Tokens are compared as SHA-256 digests with
 * timingSafeEqual against every configured token, without stopping at a
 * match, so the time taken says nothing about how much of a token was right
 * or which tenant holds it.
 */
export class TokenIndex {
  private readonly entries: Array<{ digest: Buffer; tenant: TenantConfig }>;

  constructor(readonly tenants: readonly TenantConfig[]) {
    this.entries = tenants.flatMap((t) => t.tokens.map((tok) => ({ digest: digest(tok), tenant: t })));
  }

  get enabled(): boolean {
    return this.tenants.length > 0;
  }

  lookup(token: string): TenantConfig | null {
    const d = digest(token);
    let found: TenantConfig | null = null;
    for (const e of this.entries) if (timingSafeEqual(d, e.digest) && found === null) found = e.tenant;
    return found;
  }
}

const cache = new WeakMap<readonly TenantConfig[], TokenIndex>();
/** One index per config object: a SIGHUP reload builds a new one. */
export function tokenIndex(tenants: readonly TenantConfig[]): TokenIndex {
  let idx = cache.get(tenants);
  if (!idx) cache.set(tenants, (idx = new TokenIndex(tenants)));
  return idx;
}

/**
 * The token of an Authorization header (`Bearer`, or with `genieKey`
 * Opsgenie's `GenieKey`), or null when there is none. GenieKey is what
 * Opsgenie's clients send, taken on the Opsgenie routes only: elsewhere it
 * is no credential, so a key handed to an Opsgenie integration opens
 * nothing else.
 */
export function bearer(header: string | undefined, genieKey = false): string | null {
  const m = (genieKey ? /^(?:Bearer|GenieKey)[ ]+(\S+)\s*$/i : /^Bearer[ ]+(\S+)\s*$/i).exec(header ?? '');
  return m ? m[1]! : null;
}
