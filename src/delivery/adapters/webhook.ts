import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { Adapter } from '../adapter.js';
import { ALL_KINDS } from '../adapter.js';
import { http } from '../http.js';
import { defineAdapter, fieldRenderer, httpUrl, kindsOf, wireBody, type AdapterDeps } from './common.js';
import { adapterBase, fieldTemplates, registerAdapterConfig } from '../../config/adapters.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
const HEADER_VALUE = /^[^\u0000-\u0008\u000a-\u001f\u007f]*$/;

export const webhookConfig = registerAdapterConfig(
  adapterBase.extend({
    type: z.literal('webhook'),
    url: httpUrl,
    /** signs every body: `X-Onceonly-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` */
    secret: z.string().min(16, 'use at least 16 characters').optional(),
    // Checked here, not by the HTTP client at the first delivery, whose error would quote the value (often a secret).
    headers: z
      .record(
        z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, "must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)"),
        z.string().max(8192).regex(HEADER_VALUE, 'must not hold a line break or a control character'),
      )
      .default({}),
    /** extra keys under `fields` in the body, each a template (docs/routing.md) */
    fields: fieldTemplates(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a key: a letter or _, then letters, digits or _, at most 64'),
  }),
);
export type WebhookConfig = z.output<typeof webhookConfig>;

declare module '../../config/adapters.js' {
  interface AdapterConfigs {
    webhook: WebhookConfig;
  }
}

export const SIGNATURE_HEADER = 'x-onceonly-signature';

/**
 * A key as an HTTP header value: printable ASCII goes as it is; anything else
 * (a PagerDuty dedup_key in another script) is percent-encoded as a whole,
 * since a header cannot carry it and the call could never be built.
 */
export const headerValue = (v: string) => (/^[\x20-\x7e]*$/.test(v) ? v : encodeURIComponent(v));

/** The signature a receiver recomputes: HMAC-SHA256 over `${t}.${body}` with the shared secret. */
export function sign(secret: string, t: number, body: string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/**
 * The generic webhook (docs/adapters.md): POST the entry as
 * JSON with `Idempotency-Key: key:action:n`; the receiver upserts by key.
 */
export function webhookAdapter(c: WebhookConfig, deps: AdapterDeps): Adapter {
  const kinds = kindsOf(c.kinds, ALL_KINDS);
  const render = fieldRenderer(c.fields, deps);
  const templated = Object.keys(c.fields).length > 0;
  return defineAdapter(
    c,
    (e) => kinds.has(e.kind),
    async (job) => {
      const body = JSON.stringify({ ...wireBody(job.entry), ...(templated ? { fields: render(job.entry) } : {}) });
      const headers: Record<string, string> = { ...c.headers, 'content-type': 'application/json', 'idempotency-key': headerValue(job.idempotencyKey) };
      if (c.secret) headers[SIGNATURE_HEADER] = sign(c.secret, Math.floor(deps.clock.now() / 1000), body);
      await http(c.url, { method: 'POST', headers, body, timeoutMs: c.timeout_ms, now: () => deps.clock.now() });
    },
  );
}
