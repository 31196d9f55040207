#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { keyCommand } from './key.js';
import { serveCommand } from './serve.js';
import { replayCommand } from './replay.js';
import { deadLettersCommand } from './dead-letters.js';
import { statsCommand } from './stats.js';
import { incidentsCommand } from './incidents.js';
import { migrateCommand } from './migrate.js';
import { auditCommand } from './audit.js';
import { journalCommand } from './journal.js';
import { silenceCommand } from './silences.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('onceonly').description('one fault, one key, one ticket: an idempotent deduplication gateway').version(pkg.version);
serveCommand(program);
keyCommand(program);
replayCommand(program);
deadLettersCommand(program);
statsCommand(program);
incidentsCommand(program);
migrateCommand(program);
auditCommand(program);
journalCommand(program);
silenceCommand(program);

await program.parseAsync(process.argv);
