import { readFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';

/** Start-up refused: the message says what to change. */
export class StartupError extends Error {
  readonly code = 'startup_failed';
  override name = 'StartupError';
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Without tenants there is no authentication: an open port anywhere but
 * loopback would let anyone open and close tickets. The returned check is
 * run at start and on every reload, so a reload cannot take the tenants away
 * from a public bind either.
 */
export function publicBindGuard(host: string): (cfg: Config) => void {
  const publicBind = !isLoopback(host);
  return (cfg) => {
    if (publicBind && cfg.tenants.length === 0) {
      throw new StartupError(
        `refusing to bind ${host}: no tenants are configured, so the API has no authentication; configure tenants or bind a loopback address (127.0.0.1, ::1)`,
      );
    }
  };
}

export function readTls(certPath: string | undefined, keyPath: string | undefined): { cert: Buffer; key: Buffer } | null {
  if (Boolean(certPath) !== Boolean(keyPath)) throw new StartupError('--tls-cert and --tls-key go together: give both or neither');
  if (!certPath || !keyPath) return null;
  try {
    return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
  } catch (error) {
    throw new StartupError(`cannot read TLS files: ${(error as Error).message}`);
  }
}
