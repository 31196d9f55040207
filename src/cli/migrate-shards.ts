import { type Command, InvalidArgumentError } from 'commander';
import { redisConnection } from '../store/redis/connection.js';
import { MAX_SHARDS } from '../config/redis.js';
import { migrateShards, ShardMoveRefusedError } from '../store/redis/reshard.js';
import { shown } from '../store/open.js';

const shardCount = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > MAX_SHARDS) throw new InvalidArgumentError(`--to must be a whole number from 1 to ${MAX_SHARDS}`);
  return n;
};

/**
 * `onceonly migrate-shards --store redis://… --to N`: moves a live Redis to
 * N shards while the replicas keep serving (docs/scaling.md). Replicas on the
 * old count move on their own; ones started afterwards need `redis.shards: N`.
 */
export function migrateShardsCommand(program: Command): void {
  program
    .command('migrate-shards')
    .description('move the keys of a live Redis to more shards (redis.shards) while the replicas keep serving')
    .requiredOption('--store <url>', 'redis://host:port or redis+cluster://h1:p1,h2:p2 (env ONCEONLY_STORE)', process.env.ONCEONLY_STORE)
    .requiredOption('--to <count>', `the shard count to move to (more than today's, at most ${MAX_SHARDS})`, shardCount)
    .action(async (o: { store: string; to: number }) => {
      if (!/^(redis|rediss|redis\+cluster):\/\/./.test(o.store)) {
        process.stderr.write(`onceonly migrate-shards: ${shown(o.store)} is not a Redis store; only Redis keys are laid out in shards\n`);
        process.exitCode = 2;
        return;
      }
      const conn = redisConnection(o.store);
      try {
        const m = await migrateShards(conn, o.to, (line) => process.stderr.write(`${line}\n`));
        if (m.state === 'same') process.stdout.write(`the keys are laid out in ${m.to} shards already\n`);
        else if (m.state === 'recorded') process.stdout.write(`no keys were laid out yet: recorded ${m.to} shards\n`);
        else {
          const kinds = Object.entries(m.records)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ');
          process.stdout.write(`moved from ${m.from} to ${m.to} shards: ${kinds || 'no records'}; ${m.copied} keys copied, ${m.removed} old copies removed\n`);
        }
      } catch (err) {
        process.stderr.write(`onceonly migrate-shards: ${(err as Error).message.replace(/^ERR /, '')}\n`);
        // A refusal (going down, another shard move running) is a bad request; anything else a failure to finish (run it again).
        process.exitCode = err instanceof ShardMoveRefusedError ? 2 : 1;
      } finally {
        await conn.close();
      }
    });
}
