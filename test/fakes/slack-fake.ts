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
