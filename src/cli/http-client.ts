import { InvalidArgumentError } from 'commander';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  body: unknown;
  /** set when no HTTP answer came back (connection refused, reset, timeout) */
  error?: string;
}

/** The server's URL as given (--url or ONCEONLY_URL): http or https, or a clear refusal. */
export function serverUrl(text: string): URL {
  const url = URL.canParse(text) ? new URL(text) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidArgumentError(`--url (or ONCEONLY_URL) must be an http:// or https:// URL, e.g. http://127.0.0.1:8080; got ${JSON.stringify(text)}`);
  }
  return url;
}

/** A small keep-alive JSON client for the CLI's commands against a running server. */
export function jsonClient(base: string, token?: string) {
  const url = serverUrl(base);
  const https = url.protocol === 'https:';
  const agent = https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const request = https ? httpsRequest : httpRequest;
  const call = (method: string, path: string, body?: string): Promise<HttpAnswer> =>
    new Promise((resolve) => {
      const headers: Record<string, string | number> = {};
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      if (token) headers.authorization = `Bearer ${token}`;
      const req = request(new URL(path, url), { method, agent, headers }, (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (data += d));
        res.on('end', () => {
          let parsed: unknown = data;
          try {
            parsed = data ? JSON.parse(data) : null;
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
      req.on('error', (err) => resolve({ status: 0, body: null, error: err.message }));
      req.end(body);
    });
  return {
    post: (path: string, rawJson?: string) => call('POST', path, rawJson),
    get: (path: string) => call('GET', path),
    del: (path: string) => call('DELETE', path),
    close: () => agent.destroy(),
  };
}
