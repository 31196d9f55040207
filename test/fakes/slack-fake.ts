import { startFake, type FakeServer, type Handler, type Recorded } from './http-fake.js';

/**
 * A stand-in for a Slack incoming webhook: it answers `ok` (text/plain, as
 * Slack does) to a JSON body with a non-empty `text`, 400 `invalid_payload` or
 * `no_text` otherwise, and, past `perWindow` messages in `windowMs` (Slack
 * allows about one a second per webhook), 429 with `Retry-After` in seconds.
 * `posted` holds the messages it took.
 */
export async function startSlackFake(perWindow = 1, windowMs = 1000): Promise<FakeServer & { posted: Recorded[] }> {
  const posted: Recorded[] = [];
  let windowStart = 0;
  let inWindow = 0;
  const handler = (r: Recorded): ReturnType<Handler> => {
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
  return Object.assign(fake, { posted });
}
