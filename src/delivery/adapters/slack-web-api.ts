import type { OutboxEntry } from '../../core/outbox.js';
import { TICKET_MEMORY_MS, type TicketOwner } from '../../store/contract/index.js';
import { HttpFailure, type Done } from '../http.js';
import { cutText, type AdapterDeps, restCaller } from './common.js';

/** Slack's answer to a Web API call: `ok`, and for a message its channel and `ts`. */
interface SlackAnswer {
  ok?: boolean;
  error?: string;
  channel?: string;
  ts?: string;
}

/** Slack's errors worth a retry (it answers most errors with HTTP 200 and `ok: false`; a 429 with Retry-After is retried by the HTTP layer). */
const RETRYABLE = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
/** The message (or its channel) is gone: forget it and post a new one. */
const GONE = new Set(['message_not_found', 'cant_update_message', 'channel_not_found', 'is_archived']);
/** Slack's own words, kept as the failure's reason only when they are one of its short codes. */
const CODE = /^[a-z_]{1,40}$/;
/** Slack cuts a message past 40,000 characters; it is cut here first, so the edit in place never fails on length. */
const MAX_TEXT = 40_000;

/** A message as kept in the tickets facet: its channel's id and its `ts`. */
const MESSAGE_REF = /^([A-Z0-9]{1,40}) (\d{1,12}\.\d{1,9})$/;
type Message = { channel: string; ts: string };
const refOf = (m: Message) => `${m.channel} ${m.ts}`;
const parseRef = (ref: string | null): Message | null => {
  const m = ref === null ? null : MESSAGE_REF.exec(ref);
  return m ? { channel: m[1]!, ts: m[2]! } : null;
};

export interface SlackWebApiConfig {
  name: string;
  token: string;
  channel: string;
  api_url: string;
  thread_replies: boolean;
  timeout_ms: number;
}

/**
 * Slack's Web API with a bot token: one message per key, posted once
 * (`chat.postMessage`) and edited in place (`chat.update`) for every update,
 * acknowledgement and close, so the channel shows each fault once, in its
 * current state. The message's channel and `ts` are kept in the store's
 * tickets facet, like a Jira issue key, so any replica edits it; two replicas
 * that both posted keep the first recorded and delete the other. With
 * `thread_replies`, each change after the first is also a reply under it.
 *
 * What cannot be made exactly once: a post whose answer is lost (the message
 * landed, the reply did not) leaves that message unrecorded, and the retry
 * posts another. Slack's Web API offers no idempotency key to close that.
 */
export function slackWebApi(c: SlackWebApiConfig, deps: AdapterDeps) {
  const base = c.api_url.replace(/\/+$/, '');
  const call = restCaller({ 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${c.token}` }, c, deps);
  const owner = (e: OutboxEntry): TicketOwner => ({ adapter: c.name, tenant: e.tenant, kind: e.kind, key: e.key });

  async function api(method: string, body: Record<string, unknown>): Promise<SlackAnswer> {
    const answer = ((await call(`${base}/${method}`, 'POST', body)).body ?? {}) as SlackAnswer;
    if (answer.ok === true) return answer;
    const error = typeof answer.error === 'string' && CODE.test(answer.error) ? answer.error : 'unreadable';
    throw new HttpFailure({ ok: false, retryable: RETRYABLE.has(error), reason: `slack_${error}`, error: `Slack ${method}: ${error}` });
  }
  const gone = (err: unknown) => err instanceof HttpFailure && GONE.has(err.result.reason.slice('slack_'.length));

  /** Edits `m` to `text`, and replies under it when configured; false when the message is gone. */
  async function edit(m: Message, text: string): Promise<boolean> {
    try {
      await api('chat.update', { channel: m.channel, ts: m.ts, text });
    } catch (err) {
      if (gone(err)) return false;
      throw err;
    }
    if (c.thread_replies) await api('chat.postMessage', { channel: m.channel, thread_ts: m.ts, text });
    return true;
  }

  /** Posts the key's message and records it; when another replica recorded one first, that one is edited and this one deleted. */
  async function post(e: OutboxEntry, text: string): Promise<Done> {
    const made = await api('chat.postMessage', { channel: c.channel, text });
    const message = parseRef(`${made.channel} ${made.ts}`);
    if (!message)
      throw new HttpFailure({ ok: false, retryable: false, reason: 'slack_unreadable', error: 'Slack chat.postMessage: no channel and ts in its answer' });
    const posted = { detail: `posted ${refOf(message)}`, ticket: message };
    const held = await deps.tickets.claim(owner(e), refOf(message), TICKET_MEMORY_MS);
    if (held === refOf(message)) return posted;
    // Another replica recorded a message for this key first: that one is brought up to date, and ours goes.
    const winner = parseRef(held);
    if (winner && (await edit(winner, text))) {
      await api('chat.delete', { channel: message.channel, ts: message.ts });
      return { detail: `merged into ${held}`, ticket: winner };
    }
    // The recorded one is gone from Slack: ours takes its place.
    await deps.tickets.forget(owner(e), held);
    await deps.tickets.claim(owner(e), refOf(message), TICKET_MEMORY_MS);
    return posted;
  }

  return async (e: OutboxEntry, text: string): Promise<Done> => {
    const shown = cutText(text, MAX_TEXT);
    const ref = await deps.tickets.find(owner(e), TICKET_MEMORY_MS);
    const held = parseRef(ref);
    if (held) {
      if (await edit(held, shown)) return { detail: `updated ${refOf(held)}`, ticket: held };
      // Deleted in Slack (or its channel archived): forget it, and post the key's message again.
      await deps.tickets.forget(owner(e), ref!);
    }
    return post(e, shown);
  };
}
