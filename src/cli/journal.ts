import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfigFile } from '../config/load.js';
import { systemClock } from '../core/clock.js';
import { Journal, type QuarantinedEntry } from '../store/failopen/journal.js';
import { LEGACY_JOURNAL_PATH, portJournalPath } from '../store/failopen/journal-path.js';
import { parsePort } from './options.js';

interface JournalOptions {
  journal?: string;
  config?: string;
  port?: string;
}

export function formatQuarantine(list: QuarantinedEntry[]): string {
  if (list.length === 0) return 'no quarantined journal entries';
  return list
    .map(
      (e) =>
        `${e.id}\n    tenant ${e.tenant}, key ${e.key}, decided ${new Date(e.createdAt).toISOString()}, ` +
        `quarantined ${new Date(e.quarantinedAt).toISOString()}\n    refused: ${e.error}`,
    )
    .join('\n');
}

/** The journal named by --journal, else by the config's failopen.journal_path, else the default of the replica on --port. */
function journalPath(o: JournalOptions): string {
  if (o.journal) return o.journal;
  const configured = o.config ? loadConfigFile(o.config).failopen.journal_path : undefined;
  if (configured) return configured;
  return o.port !== undefined ? portJournalPath(parsePort(o.port)) : LEGACY_JOURNAL_PATH;
}

/**
 * Opens the journal without owning it: these commands run beside the replica
 * that owns it (SQLite serialises the two), and that replica replays what
 * `retry` puts back within a second or two.
 */
async function withJournal(o: JournalOptions, what: string, run: (j: Journal) => Promise<void>): Promise<void> {
  let journal: Journal | undefined;
  try {
    const path = journalPath(o);
    if (!existsSync(path)) throw new Error(`no journal at ${JSON.stringify(path)} (give --journal PATH or --config FILE)`);
    journal = new Journal(path, systemClock);
    await run(journal);
  } catch (err) {
    process.stderr.write(`onceonly journal ${what}: ${(err as Error).message}\n`);
    process.exitCode = process.exitCode || 1;
  } finally {
    await journal?.close();
  }
}

const where = (cmd: Command) =>
  cmd
    .option(
      '--journal <path>',
      "the journal file (default: the config file's failopen.journal_path, else the journal of the replica on --port, ./data/onceonly-journal-<port>.db, else ./data/onceonly-journal.db)",
    )
    .option('--config <file>', 'read failopen.journal_path from this config file (env ONCEONLY_CONFIG)', process.env.ONCEONLY_CONFIG)
    .option('--port <port>', 'the port of the replica whose default journal to open');

/**
 * `onceonly journal list|retry|drop`: the fail-open journal entries the
 * shared store refused after an outage (quarantined), and what to do with
 * each: put it back to be replayed, or drop it for good.
 */
export function journalCommand(program: Command): void {
  const cmd = program.command('journal').description("a replica's fail-open journal: entries the shared store refused to take back (quarantined)");

  where(cmd.command('list').description('show the quarantined entries and why the store refused each'))
    .option('--json', 'print JSON')
    .action((o: JournalOptions & { json?: boolean }) =>
      withJournal(o, 'list', async (j) => {
        const list = j.quarantined();
        const pending = j.size();
        process.stdout.write(
          o.json
            ? `${JSON.stringify({ quarantined: list, waiting: pending })}\n`
            : `${formatQuarantine(list)}\n${pending} entr${pending === 1 ? 'y' : 'ies'} waiting to be replayed\n`,
        );
      }),
    );

  for (const how of ['retry', 'drop'] as const) {
    where(
      cmd
        .command(how)
        .description(
          how === 'retry'
            ? 'put quarantined entries back to be replayed first'
            : 'delete quarantined entries for good (their decisions never reach the shared store)',
        ),
    )
      .argument('[ids...]', 'entry ids, as `list` shows them')
      .option('--all', 'every quarantined entry')
      .action((ids: string[], o: JournalOptions & { all?: boolean }) =>
        withJournal(o, how, async (j) => {
          if (ids.length > 0 === Boolean(o.all)) {
            process.stderr.write(`onceonly journal ${how}: give entry ids, or --all (not both)\n`);
            process.exitCode = 2;
            return;
          }
          const wanted = o.all ? j.quarantined(Number.MAX_SAFE_INTEGER).map((e) => e.id) : ids;
          const done = await j.releaseQuarantined(wanted, how);
          const missing = wanted.filter((id) => !done.includes(id));
          process.stdout.write(`${how === 'retry' ? 'put back for replay' : 'dropped'}: ${done.length}\n`);
          if (missing.length > 0) {
            process.stderr.write(`not quarantined (already released, or mistyped): ${missing.join(', ')}\n`);
            process.exitCode = 1;
          }
        }),
      );
  }
}
