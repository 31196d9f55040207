/**
 * `onceonly serve` with its decision taken out: the same server, hooks,
 * access rule, body limit and UTF-8 check, request ids, error handler and
 * sweeps, but `POST /v1/incidents` answers a fixed CREATE at once, without
 * validating, deciding or recording anything. Between bare fastify and the real server it
 * measures what the HTTP layer costs apart from the decision, so the path
 * section can split the gap to bare fastify into the layer, the decision and
 * the history. A measuring device for the bench only: nothing ships it.
 * Arguments: those of `onceonly serve`.
 */
import type { Deduplicator, IncidentDecision } from '../../src/engine/deduplicator.js';

// The built server, as the other rows run it (npm run bench builds it first).
const dist = new URL('../../dist/', import.meta.url).href;
const { Deduplicator: Built } = (await import(`${dist}engine/deduplicator.js`)) as { Deduplicator: typeof Deduplicator };
const FIXED: IncidentDecision = { decision: 'CREATE', reason: 'new', dedup_key: 'dedup:00000000000000000000000000000000', provisional: false, muted: null };
// The route asks for the answer at once (decideIncidentNow); a batch line asks for it in a promise.
Built.prototype.decideIncidentNow = () => ({ ...FIXED });
Built.prototype.decideIncident = async () => ({ ...FIXED });
process.argv = [process.argv[0]!, 'onceonly', 'serve', ...process.argv.slice(2)];
await import(`${dist}cli/main.js`);
