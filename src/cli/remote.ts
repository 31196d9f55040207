import type { Command } from 'commander';
import { jsonClient, type HttpAnswer } from './http-client.js';

/** Commands that talk to a running server: its URL and a tenant token. */
export interface RemoteOptions {
  url: string;
  token?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export function remoteOptions(c: Command): Command {
  return c
    .option('--url <url>', `the server (env ONCEONLY_URL)`, process.env.ONCEONLY_URL ?? DEFAULT_URL)
    .option('--token <token>', 'bearer token (env ONCEONLY_TOKEN)', process.env.ONCEONLY_TOKEN);
}

/** A one-line reason a call failed: no answer, or the status and the server's message. */
export function failed(what: string, a: HttpAnswer): string {
  if (a.error) return `${what}: no answer from the server (${a.error})`;
  const e = (a.body as { error?: { message?: string } } | null)?.error;
  return `${what}: HTTP ${a.status}${e?.message ? `: ${e.message}` : ''}`;
}

/** Runs `body` with a client for the server, closing it after. */
export async function withServer<T>(o: RemoteOptions, body: (client: ReturnType<typeof jsonClient>) => Promise<T>): Promise<T> {
  const client = jsonClient(o.url, o.token);
  try {
    return await body(client);
  } finally {
    client.close();
  }
}

/** Prints the failure to stderr under the command's name and sets exit code 1. */
export function fail(command: string, message: string): void {
  process.stderr.write(`onceonly ${command}: ${message}\n`);
  process.exitCode = 1;
}
