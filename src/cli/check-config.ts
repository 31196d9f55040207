import type { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/load.js';
// The adapters' config schemas: a config naming them parses.
import '../delivery/adapters/index.js';

const counted = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * `onceonly check-config FILE…`: each file read as `serve` and a SIGHUP read
 * it (secret references resolved, every field checked), starting nothing.
 * A good file prints one line saying what it configures; a bad one prints
 * every problem on a line of its own. Exits 2 when any file is bad, else 0.
 */
export function checkConfigCommand(program: Command): void {
  program
    .command('check-config')
    .description('check config files as serve would load them, print every problem, start nothing (exit 0 all valid, 2 not)')
    .argument('<file...>', 'YAML or JSON config files')
    .action((files: string[]) => {
      for (const file of files) {
        try {
          const c = loadConfigFile(file);
          process.stdout.write(
            `${file}: valid (${counted(c.adapters.length, 'adapter')}, ${counted(c.tenants.length, 'tenant')}, ${c.route ? 'a routing tree' : 'no routing tree'})\n`,
          );
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          // A problem of the whole file (unreadable, not YAML) names the file itself: said once.
          const lines = error.problems.map((p) => `  ${p.startsWith(`${file}: `) ? p.slice(file.length + 2) : p}\n`);
          process.stderr.write(`${file}: ${counted(error.problems.length, 'problem')}\n${lines.join('')}`);
          process.exitCode = 2;
        }
      }
    });
}
