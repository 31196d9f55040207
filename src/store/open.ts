import type { Clock } from '../core/clock.js';
import type { DedupStore } from './contract.js';
import { MemoryStore } from './memory/memory-store.js';
import { SqliteStore, type SqliteSynchronous } from './sqlite/sqlite-store.js';

export class StoreUrlError extends Error {
  override name = 'StoreUrlError';
}

export const DEFAULT_STORE_URL = 'sqlite:./data/onceonly.db';

/**
 * Opens a store from its URL:
 *   memory:
 *   sqlite:PATH[?synchronous=normal|full]
 * Redis and Postgres URLs are recognised and refused with a clear message
 * until their backends exist, rather than silently falling back.
 */
export function openStore(url: string, clock: Clock): DedupStore {
  if (url === 'memory:' || url === 'memory://') return new MemoryStore(clock);
  if (url.startsWith('sqlite:')) {
    const [rawPath = '', query = ''] = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '').split('?', 2);
    if (rawPath === '') throw new StoreUrlError(`store URL ${JSON.stringify(url)} has no file path: use sqlite:./data/onceonly.db`);
    const params = new URLSearchParams(query);
    for (const name of params.keys()) {
      if (name !== 'synchronous') throw new StoreUrlError(`store URL option ${JSON.stringify(name)} is unknown (known: synchronous)`);
    }
    const sync = params.get('synchronous') ?? 'normal';
    if (sync !== 'normal' && sync !== 'full') {
      throw new StoreUrlError(`store URL option synchronous=${JSON.stringify(sync)} must be normal or full`);
    }
    return new SqliteStore(rawPath, clock, { synchronous: sync as SqliteSynchronous });
  }
  if (/^(redis|rediss|redis\+cluster|postgres|postgresql):/.test(url)) {
    throw new StoreUrlError(`store ${JSON.stringify(url.split(':')[0])} is not available in this version yet; use memory: or sqlite:PATH`);
  }
  throw new StoreUrlError(`store URL ${JSON.stringify(url)} is not recognised: use memory: or sqlite:PATH`);
}
