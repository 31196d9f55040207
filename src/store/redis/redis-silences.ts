import { SILENCE_RETENTION_MS, SILENCE_TRIM_BATCH, type Silence, type SilenceLimits, type SilenceStore, type SilenceUpdate } from '../contract/index.js';
import type { RedisConnection } from './connection.js';
import { silenceKeys as K } from './keys.js';
import { scripts } from './scripts.js';

/** A silence as stored: its fields as JSON (Lua's cjson reads the times on expire). */
const body = (s: Silence) => JSON.stringify(s);

/**
 * Silences on Redis: a string each, with two end-time indexes and a version
 * counter, all in the `{oo:sil}` slot so that every write (and the version
 * bump that goes with it) is one script. Redis deletes a silence itself,
 * SILENCE_RETENTION after it ends.
 */
export class RedisSilences implements SilenceStore {
  constructor(private readonly conn: RedisConnection) {}

  private write(mode: string, tenant: string, id: string, now: number, rest: Array<string | number>) {
    return this.conn.evalScript(
      scripts.silenceWrite,
      [K.silence(tenant, id), K.tenant(tenant), K.all, K.version, K.changes],
      [mode, now, SILENCE_RETENTION_MS, ...rest],
    );
  }

  async create(s: Silence, limits: SilenceLimits, now: number) {
    return Number(await this.write('create', s.tenant, s.id, now, [body(s), s.endsAt, limits.open, limits.ended, SILENCE_TRIM_BATCH])) === 1;
  }

  async update(s: Silence, now: number) {
    return String(await this.write('update', s.tenant, s.id, now, [body(s), s.endsAt])) as SilenceUpdate;
  }

  async expire(tenant: string, id: string, now: number) {
    return Number(await this.write('expire', tenant, id, now, [])) === 1;
  }

  async get(tenant: string, id: string): Promise<Silence | null> {
    const k = K.silence(tenant, id);
    const v = await this.conn.send(k, ['GET', k]);
    return v ? (JSON.parse(String(v)) as Silence) : null;
  }

  async list(tenant: string | null, endedAfter?: number): Promise<Silence[]> {
    const index = tenant === null ? K.all : K.tenant(tenant);
    const found = (await this.conn.evalScript(scripts.silenceList, [index], [endedAfter === undefined ? '-inf' : `(${endedAfter}`])) as string[];
    return found.map((v) => JSON.parse(v) as Silence).sort((a, b) => a.startsAt - b.startsAt || (a.id < b.id ? -1 : 1));
  }

  async changedSince(since: number) {
    const [version, ...found] = (await this.conn.evalScript(scripts.silenceChanged, [K.changes, K.version], [since])) as string[];
    return { version: Number(version ?? 0), silences: found.map((v) => JSON.parse(v) as Silence) };
  }

  async version(): Promise<number> {
    return Number((await this.conn.send(K.version, ['GET', K.version])) ?? 0);
  }
}
