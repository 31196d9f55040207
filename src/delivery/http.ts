import { retryAfterMs } from './backoff.js';
import type { AdapterResult } from './adapter.js';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** A failed answer, classified as docs/adapters.md says: 408, 429 and 5xx retry; any other non-2xx is permanent. */
export class HttpFailure extends Error {
  readonly code = 'receiver_failed';
  constructor(readonly result: Extract<AdapterResult, { ok: false }>) {
    super(result.error);
  }
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * One HTTP call (Node's fetch, i.e. undici). Resolves with the answer when it
 * is 2xx; throws HttpFailure with the retry classification otherwise,
 * including for network errors and timeouts (retryable: the request may or may
 * not have been applied, which is why every adapter upserts by key).
 */
export async function http(url: string, o: HttpOptions = {}): Promise<HttpAnswer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: o.method ?? 'GET',
      headers: o.headers,
      body: o.body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
      redirect: 'manual',
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
    // undici reports a failed connection as TypeError('fetch failed') with a cause; any other
    // TypeError is a request that could not be built (a header value, a URL): retrying cannot help.
    const unbuildable = !timeout && e.name === 'TypeError' && e.message !== 'fetch failed';
    throw new HttpFailure({
      ok: false,
      retryable: !unbuildable,
      reason: timeout ? 'timeout' : unbuildable ? 'unbuildable' : 'network',
      error: `${o.method ?? 'GET'} ${origin(url)}: ${timeout ? 'timed out' : unbuildable ? `the request could not be built: ${unbuildableWhy(e.message)}` : (e.cause?.code ?? e.cause?.message ?? e.message)}`,
    });
  }
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (res.status >= 200 && res.status < 300) return { status: res.status, headers: res.headers, body, text };
  const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
  const after = retryAfterMs(res.headers.get('retry-after'), (o.now ?? Date.now)());
  throw new HttpFailure({
    ok: false,
    retryable,
    reason: `http_${res.status}`,
    error: `${o.method ?? 'GET'} ${origin(url)}: HTTP ${res.status} ${text.slice(0, 200)}`.trim(),
    ...(after !== null ? { retryAfterMs: after } : {}),
  });
}

/**
 * Why the HTTP client would not build a request, without its words: they
 * quote the header value or URL it refused, and those hold secrets (a token
 * read from a file with a line break in it, a Slack webhook's path).
 */
function unbuildableWhy(message: string): string {
  if (/header/i.test(message)) return 'a header name or value the HTTP client refuses (a line break or control character in a configured header or secret?)';
  if (/url/i.test(message)) return 'the URL is not valid';
  return 'the HTTP client refused it';
}

/** What an adapter's call did: a few words, or those and the ticket at the receiver. */
export type Done = string | { detail: string; ticket: Readonly<Record<string, string>> } | void;

/** Runs an adapter's calls; an HttpFailure (or any error) becomes the result instead of escaping. */
export async function attempt(run: () => Promise<Done>): Promise<AdapterResult> {
  try {
    const done = await run();
    if (typeof done === 'object') return { ok: true, ...done };
    return done ? { ok: true, detail: done } : { ok: true };
  } catch (err) {
    if (err instanceof HttpFailure) return err.result;
    return { ok: false, retryable: true, reason: 'error', error: (err as Error).message };
  }
}

/**
 * A destination as errors, dead letters, logs and the dashboard show it:
 * `scheme://host:port` only. Paths and queries carry secrets (a Slack
 * webhook's path, `?token=…`), and so do credentials.
 */
export function origin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(an invalid URL)';
  }
}

export const json = (v: unknown) => JSON.stringify(v);
export const basicAuth = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
