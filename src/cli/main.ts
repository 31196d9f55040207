#!/usr/bin/env node
// First, before any other module runs: see the module.
import './keep-tick-shape.js';
import { COMMIT, VERSION } from '../core/version.js';
import { schemaVersions } from '../store/schema-versions.js';
import { runtimeSupportLine } from './runtime-support.js';
import { Command, InvalidArgumentError } from 'commander';
import { keyCommand } from './key.js';
import { checkConfigCommand } from './check-config.js';
import { backupCommand } from './backup.js';
import { serveCommand } from './serve.js';
import { replayCommand } from './replay.js';
import { deadLettersCommand } from './dead-letters.js';
import { statsCommand } from './stats.js';
import { incidentsCommand } from './incidents.js';
import { explainCommand } from './explain.js';
import { migrateCommand } from './migrate.js';
import { migrateShardsCommand } from './migrate-shards.js';
import { auditCommand } from './audit.js';
import { journalCommand } from './journal.js';
import { silenceCommand } from './silences.js';
import { routesCommand } from './routes.js';
import { simulateCommand } from './simulate.js';

const unsupported = runtimeSupportLine(process.version);
if (unsupported) process.stderr.write(unsupported);

const schemas = schemaVersions();
// The release, the commit it was built from and the schemas it migrates to: what an operator checks before an upgrade.
const program = new Command('onceonly')
  .description('one fault, one key, one ticket: an idempotent deduplication gateway')
  .version(`${VERSION} (commit ${COMMIT}; schema: sqlite ${schemas.sqlite}, postgres ${schemas.postgres})`);
// commander's own usage errors (an unknown command or option, a missing argument) exit 2, as every other
// bad input does; set before the commands are added, which inherit it.
program.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
program.showSuggestionAfterError(true);
serveCommand(program);
keyCommand(program);
replayCommand(program);
deadLettersCommand(program);
statsCommand(program);
incidentsCommand(program);
explainCommand(program);
migrateCommand(program);
migrateShardsCommand(program);
auditCommand(program);
journalCommand(program);
silenceCommand(program);
routesCommand(program);
simulateCommand(program);
checkConfigCommand(program);
backupCommand(program);

// A bare `onceonly` is a question, not an order to serve: it prints the commands (`serve` starts the server).
if (process.argv.length <= 2) {
  program.outputHelp();
  process.exit(0);
}
await program.parseAsync(process.argv).catch((err: unknown) => {
  // A bad value found once a command runs (a server URL that is no URL): one line, exit 2, no stack.
  if (!(err instanceof InvalidArgumentError)) throw err;
  process.stderr.write(`onceonly: ${err.message}\n`);
  process.exit(2);
});
