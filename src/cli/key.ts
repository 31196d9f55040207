import type { Command } from 'commander';
import { incidentKey } from '../core/identity.js';
import { ValidationError } from '../core/validation.js';
import { parseIncident } from '../inputs/incident/parse.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function keyCommand(program: Command): void {
  program
    .command('key')
    .description('read one incident as JSON on stdin (the POST /v1/incidents body) and print its dedup_key')
    .action(async () => {
      const text = await readStdin();
      try {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (error) {
          throw new ValidationError(`stdin is not valid JSON: ${(error as Error).message}`, []);
        }
        // The whole body as POST /v1/incidents checks it: a key printed here is one the server would give.
        process.stdout.write(`${incidentKey(parseIncident(body))}\n`);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        process.stderr.write(`onceonly key: ${error.message}\n`);
        process.exitCode = 2;
      }
    });
}
