/**
 * Keeps one entry of Node's `process.nextTick` queue alive for the life of
 * the process. Imported first by the CLI, before anything else runs.
 *
 * Why: Node builds each tick entry as an object literal whose first two keys
 * are computed (the async id symbols). Such a literal has no boilerplate
 * object, so nothing holds on to the hidden classes ("maps") V8 makes for its
 * shape while no tick entry is alive. A full garbage collection at such a
 * moment frees them, the next tick entry gets new ones, and V8's inline cache
 * for that literal, having seen two maps, gives up for good: from then on
 * every `nextTick` (a dozen per HTTP answer, in Node's streams) defines its
 * properties through the runtime. A server that keeps much on its heap (the
 * memory store, every key's history) collects fully while warming up, so it
 * met this and bare fastify did not: about 15,000 instructions per answer,
 * 7% of the served path (callgrind, `npm run bench -- path`). One entry kept
 * keeps its maps, and the cache stays on the fast path.
 */
import { executionAsyncResource } from 'node:async_hooks';

/** The tick entry kept (inside a nextTick callback, the execution resource is that callback's entry). */
let kept: object | undefined;

process.nextTick(() => {
  kept = executionAsyncResource();
});

/** The entry kept (after the first tick): a test checks it still has the shape this works for. */
export const keptTickEntry = (): object | undefined => kept;
