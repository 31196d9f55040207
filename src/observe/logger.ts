import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Tokens and request bodies are never logged. */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], remove: true },
  });
}
