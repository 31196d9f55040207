import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock } from '../../core/clock.js';
import { Journal } from './journal.js';
import { JournalInUseError } from './journal-lock.js';

/** Where a replica kept its journal when no path was configured, before the default became one per port. */
export const LEGACY_JOURNAL_PATH = './data/onceonly-journal.db';

/** The default journal of the replica listening on `port`: replicas on one host, started from one config, each get their own. */
export const portJournalPath = (port: number): string => join(dirname(LEGACY_JOURNAL_PATH), `onceonly-journal-${port}.db`);

/**
 * Opens the journal of a replica whose config names none: one per port
 * (`./data/onceonly-journal-<port>.db`), so replicas on one host need no
 * config each. A journal left at the earlier default path (before an
 * upgrade, maybe holding a crash's entries) is not stranded: a replica that
 * has no journal of its own yet opens that one if no other process holds it,
 * and replays what it holds (any replica may replay any journal: a replay is
 * idempotent), and keeps it. On port 0 (a port chosen at random) there is no
 * stable name: the earlier default is used.
 */
export function openDefaultJournal(port: number, clock: Clock): Journal {
  const own = portJournalPath(port);
  if (port === 0) return new Journal(LEGACY_JOURNAL_PATH, clock, { own: true });
  if (!existsSync(own) && existsSync(LEGACY_JOURNAL_PATH)) {
    try {
      return new Journal(LEGACY_JOURNAL_PATH, clock, { own: true });
    } catch (err) {
      // Another replica on this host took it first: this one starts its own.
      if (!(err instanceof JournalInUseError)) throw err;
    }
  }
  return new Journal(own, clock, { own: true });
}
