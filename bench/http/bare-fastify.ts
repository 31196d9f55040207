/**
 * The HTTP baseline: a bare fastify route on the same path that parses the
 * same JSON body and answers a constant, with no validation, identity or
 * store. Whatever onceonly does beyond this is what its ratio measures.
 */
import Fastify from 'fastify';

const app = Fastify();
app.post('/v1/incidents', async () => ({ decision: 'CREATE', dedup_key: 'dedup:00000000000000000000000000000000', provisional: false }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(JSON.stringify({ msg: `listening on ${address}` }));
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
