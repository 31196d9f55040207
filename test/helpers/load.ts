import { jsonClient } from '../../src/cli/http-client.js';

export interface Shot {
  url: string;
  body: unknown;
}

export interface Answer {
  status: number;
  body: any;
  ms: number;
  error?: string;
}

const clients = new Map<string, ReturnType<typeof jsonClient>>();

/** POSTs JSON with the CLI's keep-alive client; never throws: a failure is an answer with status 0. */
export async function post(url: string, body: unknown): Promise<Answer> {
  const u = new URL(url);
  let client = clients.get(u.origin);
  if (!client) clients.set(u.origin, (client = jsonClient(u.origin)));
  const started = performance.now();
  const a = await client.post(u.pathname, JSON.stringify(body));
  return { status: a.status, body: a.body, ms: performance.now() - started, ...(a.error ? { error: a.error } : {}) };
}

/** Sends every shot, at most `concurrency` at a time, answers in the shots' order. */
export async function fire(shots: Shot[], concurrency: number): Promise<Answer[]> {
  const answers = new Array<Answer>(shots.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, shots.length) }, async () => {
      while (next < shots.length) {
        const i = next++;
        answers[i] = await post(shots[i]!.url, shots[i]!.body);
      }
    }),
  );
  return answers;
}

export async function metric(baseUrl: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return [...text.matchAll(new RegExp(pattern.source, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
}

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
