import { z } from 'zod';

/**
 * The `redis` section: how many hash-tag shards the keys are spread over.
 * The count is part of the stored layout (store/redis/keys.ts builds every
 * key name from it); its bounds live here, below the store, so the config
 * and the store read one definition.
 */

/** The shard count a store uses unless configured otherwise (`redis.shards`). */
export const DEFAULT_SHARDS = 64;
/** Redis Cluster has 16,384 hash slots: more shards than that could land in no more places. */
export const MAX_SHARDS = 16_384;

export const redisConfig = z
  .strictObject({
    shards: z.number().int().min(1).max(MAX_SHARDS).default(DEFAULT_SHARDS),
    /**
     * Run on a Redis that can lose what it acknowledged (no AOF and no RDB,
     * or an eviction policy other than noeviction). Refused at start unless
     * this is true (or ONCEONLY_REDIS_ACCEPT_DATA_LOSS=1). Read at start.
     */
    accept_data_loss: z.boolean().default(false),
  })
  .prefault({});
