import { Agent, request } from 'node:http';

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

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** POSTs JSON with node:http (keep-alive); never throws: a failure is an answer with status 0. */
export function post(url: string, body: unknown): Promise<Answer> {
  const started = performance.now();
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          let parsed: unknown = null;
          try {
            parsed = data ? JSON.parse(data) : null;
          } catch {
            parsed = data;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, ms: performance.now() - started });
        });
      },
    );
    req.on('error', (err) => resolve({ status: 0, body: null, ms: performance.now() - started, error: err.message }));
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.end(payload);
  });
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
