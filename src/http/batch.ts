import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody, sizeText } from './errors.js';
import { toApiError } from './error-mapping.js';
import { NOT_UTF8 } from './utf8-json.js';

/**
 * Batches: `POST` with `Content-Type: application/x-ndjson` on the routes that
 * decide one input (incidents, events, violations). Each line is its own
 * atomic decision, made in line order, so a batch decides exactly what the
 * same lines sent one by one would; the answer is NDJSON, one line per input
 * line: the object a single request answers, or `{"error": …}` for that line
 * alone.
 */
export const NDJSON = 'application/x-ndjson';
/** A batch's bounds: `limits.batch_lines` and `limits.batch_bytes`, read at start. */
export interface BatchLimits {
  lines: number;
  bytes: number;
}

/** What the batch routes' docs say about batches. */
export const BATCH_DOC =
  'Also takes a batch: `Content-Type: application/x-ndjson`, one input per line (at most `limits.batch_lines` lines and `limits.batch_bytes` bytes, by default 10,000 and 16 MiB; each line one token of the rate limit), answered as NDJSON, one line per input line in order: the single answer, or `{"error": …}` for that line alone.';

/** A parsed NDJSON body: its lines as text, each parsed on its own so a bad one fails alone. */
export class Batch {
  constructor(readonly lines: readonly string[]) {}
}

const NEWLINE = 0x0a;

/**
 * The NDJSON body parser, for the batch routes only (any other route answers
 * 415 without reading the body). It reads the stream itself, so a body past
 * its lines or bytes bound is refused (413) as soon as it gets there, not after
 * it has all arrived.
 */
export function ndjsonParser(app: FastifyInstance, routes: ReadonlySet<string>, limits: BatchLimits): void {
  const tooMany = () => new ApiError('payload_too_large', `a batch is at most ${limits.lines.toLocaleString('en')} lines (limits.batch_lines)`);
  app.addContentTypeParser(NDJSON, { bodyLimit: limits.bytes }, (req, payload, done) => {
    if (!routes.has(req.routeOptions.url ?? '')) {
      done(new ApiError('unsupported_media_type', `${NDJSON} batches are taken by ${[...routes].join(', ')} only; send one JSON body`), undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let newlines = 0;
    let finished = false;
    const fail = (e: ApiError) => {
      if (finished) return;
      finished = true;
      payload.removeAllListeners('data');
      payload.resume();
      done(e, undefined);
    };
    payload.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.bytes) return fail(new ApiError('payload_too_large', `a batch is at most ${sizeText(limits.bytes)} (limits.batch_bytes)`));
      for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, i + 1)) newlines++;
      // N lines may end with a line break; an N+1st line break means an N+1st line.
      if (newlines > limits.lines) return fail(tooMany());
      chunks.push(chunk);
    });
    payload.on('error', (err) => fail(toApiError(err)));
    payload.on('end', () => {
      if (finished) return;
      finished = true;
      const body = Buffer.concat(chunks);
      if (!isUtf8(body)) return done(new ApiError('invalid_input', NOT_UTF8, [{ path: '', message: 'not valid UTF-8' }]), undefined);
      const lines = body.toString('utf8').split('\n');
      if (lines.at(-1) === '') lines.pop();
      if (lines.length === 0) return done(new ApiError('invalid_input', 'the batch is empty: send one JSON object per line'), undefined);
      if (lines.length > limits.lines) return done(tooMany(), undefined);
      done(null, new Batch(lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))));
    });
  });
}

export interface BatchLine<T> {
  /** the answer a single request would have had */
  body: T | ReturnType<typeof errorBody>;
  error?: ApiError;
}

/** Lines of one batch decided at once, at most. */
export const BATCH_CONCURRENCY = 64;

/**
 * A lane: lines that may touch the same record (one incident key, one
 * device, one process and rule). Lines of one lane are decided one after
 * the other in line order; lines of different lanes touch different records,
 * so they are decided concurrently, and the result is the same as one by one.
 */
export type LaneOf = (input: Record<string, unknown>) => unknown[];

/**
 * Decides each line with `one` (what the single route does with its body),
 * in line order within its lane, and answers NDJSON in line order. A line
 * that is not JSON, or that `one` refuses, answers `{"error": …}` in the
 * API's error shape; the other lines go on.
 */
export async function answerBatch<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  batch: Batch,
  one: (input: unknown) => Promise<T>,
  laneOf: LaneOf,
  after?: (line: BatchLine<T>) => void,
): Promise<string> {
  const answers: string[] = new Array(batch.lines.length);
  const tails = new Map<string, Promise<void>>();
  let active = 0;
  const waiting: Array<() => void> = [];
  const decide = async (i: number, input: unknown, parseError: ApiError | null) => {
    while (active >= BATCH_CONCURRENCY) await new Promise<void>((r) => waiting.push(r));
    active++;
    let line: BatchLine<T>;
    try {
      if (parseError) throw parseError;
      line = { body: await one(input) };
    } catch (err) {
      const e = toApiError(err);
      if (e.status >= 500) req.server.logger.error({ err, line: i + 1, reqId: req.id }, 'batch line failed');
      line = { body: errorBody(e), error: e };
    } finally {
      active--;
      waiting.shift()?.();
    }
    after?.(line);
    answers[i] = JSON.stringify(line.body);
  };
  const all = batch.lines.map((text, i) => {
    let input: unknown = null;
    let parseError: ApiError | null = null;
    try {
      input = JSON.parse(text);
    } catch (err) {
      parseError = new ApiError('invalid_input', `line ${i + 1} is not valid JSON: ${(err as Error).message}`, [{ path: '', message: 'not valid JSON' }]);
    }
    // A line that is not an object fails alone: it gets a lane of its own.
    const lane = input !== null && typeof input === 'object' && !Array.isArray(input) ? JSON.stringify(laneOf(input as Record<string, unknown>)) : `#${i}`;
    const mine = (tails.get(lane) ?? Promise.resolve()).then(() => decide(i, input, parseError));
    tails.set(lane, mine);
    return mine;
  });
  await Promise.all(all);
  reply.type(`${NDJSON}; charset=utf-8`);
  return `${answers.join('\n')}\n`;
}
