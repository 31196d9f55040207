import { startFake, type FakeServer, type Handler, type Recorded } from './http-fake.js';

/** The one incoming webhook the fake serves (Slack's shape: /services/<team>/<bot>/<secret>). */
export const SLACK_HOOK_PATH = '/services/T0000TEST/B0000TEST/fakeSecretOf24Characters';

/**
 * A stand-in for a Slack incoming webhook. As Slack answers (its "Handling
 * errors" table for incoming webhooks): a POST to any path but the hook's is
 * 404 `no_service` (a webhook that is disabled, removed or mistyped); a body
 * that is not a JSON object is 400 `invalid_payload`, one without a
 * non-empty `text` 400 `no_text`; past `perWindow` messages in `windowMs`
 * (Slack allows about one a second per webhook) 429 with `Retry-After` in
 * seconds; otherwise `ok` (text/plain). `posted` holds the messages it took;
 * `hookUrl` is the webhook's URL.
 */
export async function startSlackFake(perWindow = 1, windowMs = 1000): Promise<FakeServer & { posted: Recorded[]; hookUrl: string }> {
  const posted: Recorded[] = [];
  let windowStart = 0;
  let inWindow = 0;
  const handler = (r: Recorded): ReturnType<Handler> => {
    if (r.method !== 'POST' || r.path !== SLACK_HOOK_PATH) return { status: 404, body: 'no_service', headers: { 'content-type': 'text/plain' } };
    if (typeof r.body !== 'object' || r.body === null) return { status: 400, body: 'invalid_payload' };
    if (typeof r.body.text !== 'string' || r.body.text.trim() === '') return { status: 400, body: 'no_text' };
    const now = Date.now();
    if (now - windowStart >= windowMs) [windowStart, inWindow] = [now, 0];
    if (++inWindow > perWindow) {
      return { status: 429, body: 'rate_limited', headers: { 'retry-after': String(Math.ceil((windowStart + windowMs - now) / 1000)) } };
    }
    posted.push(r);
    return { status: 200, body: 'ok', headers: { 'content-type': 'text/plain' } };
  };
  const fake = await startFake(handler);
  return Object.assign(fake, { posted, hookUrl: `${fake.url}${SLACK_HOOK_PATH}` });
}

/** A message as the Web API fake holds it. */
export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  /** the parent's ts, for a reply in a thread */
  thread_ts?: string;
  /** how many times chat.update changed it */
  edits: number;
}

/**
 * A stand-in for Slack's Web API (`chat.postMessage`, `chat.update`,
 * `chat.delete`), strict as Slack is: every answer is HTTP 200 with `ok`,
 * and `ok: false` with Slack's error code for a missing (`not_authed`) or
 * wrong (`invalid_auth`) bearer token, a body that is not JSON
 * (`invalid_form_data`), a channel it does not have (`channel_not_found`;
 * update and delete take only the channel's id, as Slack's do), no text
 * (`no_text`), text over 40,000 characters (`msg_too_long`), a `ts` that is
 * no message in that channel (`message_not_found`) or a thread parent that is
 * none (`thread_not_found`). Past `perWindow` calls in `windowMs` it answers
 * HTTP 429 `ratelimited` with `Retry-After` in seconds, as Slack's rate
 * limits do. `messages` holds what the channel shows.
 */
export async function startSlackWebApiFake(o: {
  token: string;
  channels: Record<string, string>;
  perWindow?: number;
  windowMs?: number;
}): Promise<FakeServer & { messages: SlackMessage[]; apiUrl: string; calls: (method: string) => Recorded[] }> {
  const messages: SlackMessage[] = [];
  const perWindow = o.perWindow ?? 50;
  const windowMs = o.windowMs ?? 1000;
  let windowStart = 0;
  let inWindow = 0;
  let clock = 0;
  const idOf = (channel: unknown, byName: boolean) => {
    if (typeof channel !== 'string') return null;
    if (channel in o.channels) return channel;
    const named = byName ? Object.entries(o.channels).find(([, name]) => `#${name}` === channel) : undefined;
    return named ? named[0] : null;
  };
  const find = (channel: string, ts: unknown) => messages.find((m) => m.channel === channel && m.ts === ts);
  const fail = (error: string) => ({ status: 200, body: { ok: false, error } });
  const handler = (r: Recorded): ReturnType<Handler> => {
    const method = r.path.replace(/^\/api\//, '');
    if (r.method !== 'POST' || !['chat.postMessage', 'chat.update', 'chat.delete'].includes(method))
      return { status: 404, body: { ok: false, error: 'unknown_method' } };
    const auth = r.headers.authorization;
    if (auth === undefined) return fail('not_authed');
    if (auth !== `Bearer ${o.token}`) return fail('invalid_auth');
    if (!String(r.headers['content-type'] ?? '').startsWith('application/json') || typeof r.body !== 'object' || r.body === null)
      return fail('invalid_form_data');
    const now = Date.now();
    if (now - windowStart >= windowMs) [windowStart, inWindow] = [now, 0];
    if (++inWindow > perWindow) {
      return {
        status: 429,
        body: { ok: false, error: 'ratelimited' },
        headers: { 'retry-after': String(Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000))) },
      };
    }
    const channel = idOf(r.body.channel, method === 'chat.postMessage');
    if (channel === null) return fail('channel_not_found');
    if (method === 'chat.delete') {
      const m = find(channel, r.body.ts);
      if (!m) return fail('message_not_found');
      messages.splice(messages.indexOf(m), 1);
      return { status: 200, body: { ok: true, channel, ts: m.ts } };
    }
    const text = r.body.text;
    if (typeof text !== 'string' || text.trim() === '') return fail('no_text');
    if (text.length > 40_000) return fail('msg_too_long');
    if (method === 'chat.update') {
      const m = find(channel, r.body.ts);
      if (!m) return fail('message_not_found');
      m.text = text;
      m.edits++;
      return { status: 200, body: { ok: true, channel, ts: m.ts, text } };
    }
    if (r.body.thread_ts !== undefined && !find(channel, r.body.thread_ts)) return fail('thread_not_found');
    const ts = `${1_800_000_000 + Math.floor(++clock / 1000)}.${String(clock % 1000).padStart(6, '0')}`;
    messages.push({ channel, ts, text, edits: 0, ...(r.body.thread_ts !== undefined ? { thread_ts: r.body.thread_ts } : {}) });
    return { status: 200, body: { ok: true, channel, ts, message: { text, ts } } };
  };
  const fake = await startFake(handler);
  return Object.assign(fake, {
    messages,
    apiUrl: `${fake.url}/api`,
    calls: (method: string) => fake.requests.filter((r) => r.path === `/api/${method}`),
  });
}
