import type { MaintenanceConfig } from '../config/maintenance.js';
import { type CompiledMatcher, type Labels, matchesAll, parseMatcher } from '../core/matcher.js';
import type { Muted, MuteSource } from './mutes.js';
import { intervalContains, parseTimeInterval, type TimeInterval } from '../core/time-intervals.js';

interface Window {
  name: string;
  matchers: CompiledMatcher[];
  intervals: TimeInterval[];
}

/**
 * Maintenance windows from the config in force: a key a window's matchers
 * match is muted while one of its intervals contains now. Compiled once per
 * config (a SIGHUP reload brings a new one); a window that ends releases what
 * it held at the next look (every second).
 */
export class MaintenanceWindows implements MuteSource {
  private compiledFor: MaintenanceConfig | null = null;
  private windows: Window[] = [];

  constructor(private readonly config: () => MaintenanceConfig) {}

  private current(): Window[] {
    const c = this.config();
    if (c !== this.compiledFor) {
      // Checked when the config was loaded; parsing again cannot fail.
      this.windows = c.map((w) => ({ name: w.name, matchers: w.matchers.map((m) => parseMatcher(m)), intervals: w.time_intervals.map(parseTimeInterval) }));
      this.compiledFor = c;
    }
    return this.windows;
  }

  mayMute(): boolean {
    return this.current().length > 0;
  }

  mutedBy(_tenant: string, labels: Labels, now: number): Muted | null {
    for (const w of this.current()) {
      if (w.intervals.some((t) => intervalContains(t, now)) && matchesAll(w.matchers, labels)) return { by: 'maintenance', id: w.name };
    }
    return null;
  }
}
