import { StoreUnavailableError } from '../errors.js';

/**
 * SQLite result codes that say the file cannot be written now, whatever is
 * written: a full disk (or `max_page_count` reached), a read-only file or
 * mount, an I/O error, a lock held too long. They are the store's condition,
 * not the request's: the request answers 503 with Retry-After, and /readyz
 * is 503 until a write succeeds again.
 */
const CANNOT_WRITE = /^SQLITE_(FULL|READONLY|IOERR|CANTOPEN|BUSY|NOMEM|PROTOCOL)/;

export function isWriteFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CANNOT_WRITE.test(code);
}

export function writeFaultError(err: unknown): StoreUnavailableError {
  const e = err as { code: string; message: string };
  const hint = e.code.startsWith('SQLITE_FULL')
    ? 'the disk (or the file size cap) is full: free space'
    : e.code.startsWith('SQLITE_READONLY')
      ? 'the file or its mount is read-only: restore write access'
      : e.code.startsWith('SQLITE_BUSY')
        ? 'another process holds the write lock'
        : 'the file cannot be written';
  return new StoreUnavailableError(`the SQLite store cannot write (${e.code}: ${hint}); nothing of this request was stored, retry`);
}
