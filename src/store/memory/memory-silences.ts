import type { Clock } from '../../core/clock.js';
import { SILENCE_RETENTION_MS, SILENCE_TRIM_BATCH, type Silence, type SilenceLimits, type SilenceStore, type SilenceUpdate } from '../contract/index.js';
import { memoryId } from './memory-incidents.js';
import { sweepMap } from './sweep.js';

const copy = (s: Silence): Silence => ({ ...s, matchers: s.matchers.map((m) => ({ ...m })) });

/** Silences in memory; each call runs to completion synchronously (its atomic step). */
export class MemorySilences implements SilenceStore {
  private readonly byId = new Map<string, Silence>();
  /** each silence's last write, by the version it made */
  private readonly writtenAt = new Map<string, number>();
  private v = 0;

  constructor(
    private readonly clock: Clock,
    private readonly assertOpen: () => void,
  ) {}

  async create(s: Silence, limits: SilenceLimits, now: number): Promise<boolean> {
    this.assertOpen();
    let open = 0;
    for (const x of this.byId.values()) if (x.tenant === s.tenant && x.endsAt > now) open++;
    if (open >= limits.open) return false;
    this.byId.set(memoryId(s.tenant, s.id), copy(s));
    const ended = [...this.byId.values()].filter((x) => x.tenant === s.tenant && x.endsAt <= now).sort((a, b) => b.endsAt - a.endsAt);
    for (const x of ended.slice(limits.ended, limits.ended + SILENCE_TRIM_BATCH)) {
      this.byId.delete(memoryId(x.tenant, x.id));
      this.writtenAt.delete(memoryId(x.tenant, x.id));
    }
    this.writtenAt.set(memoryId(s.tenant, s.id), ++this.v);
    return true;
  }

  async update(s: Silence, now: number): Promise<SilenceUpdate> {
    this.assertOpen();
    const id = memoryId(s.tenant, s.id);
    const old = this.byId.get(id);
    if (!old) return 'absent';
    if (old.endsAt <= now) return 'expired';
    this.byId.set(id, copy(s));
    this.writtenAt.set(id, ++this.v);
    return 'updated';
  }

  async expire(tenant: string, id: string, now: number): Promise<boolean> {
    this.assertOpen();
    const s = this.byId.get(memoryId(tenant, id));
    if (!s) return false;
    if (s.endsAt > now) {
      s.startsAt = Math.min(s.startsAt, now);
      s.endsAt = now;
      s.updatedAt = now;
      this.writtenAt.set(memoryId(tenant, id), ++this.v);
    }
    return true;
  }

  async get(tenant: string, id: string): Promise<Silence | null> {
    this.assertOpen();
    const s = this.byId.get(memoryId(tenant, id));
    return s ? copy(s) : null;
  }

  async list(tenant: string | null, endedAfter = Number.NEGATIVE_INFINITY): Promise<Silence[]> {
    this.assertOpen();
    return [...this.byId.values()].filter((s) => (tenant === null || s.tenant === tenant) && s.endsAt > endedAfter).map(copy);
  }

  async changedSince(since: number): Promise<{ version: number; silences: Silence[] }> {
    this.assertOpen();
    const silences = [...this.byId].filter(([id]) => (this.writtenAt.get(id) ?? 0) > since).map(([, s]) => copy(s));
    return { version: this.v, silences };
  }

  async version(): Promise<number> {
    this.assertOpen();
    return this.v;
  }

  sweep(batch: number): number {
    const before = this.clock.now() - SILENCE_RETENTION_MS;
    const gone = sweepMap(
      this.byId,
      batch,
      (s) => s.endsAt <= before,
      (id) => this.writtenAt.delete(id),
    );
    if (gone > 0) this.v++;
    return gone;
  }
}
