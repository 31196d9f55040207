/** The errors a store raises beyond its data's own, and the timeout race fail-open is built on. */

/** The store cannot serve now (unreachable, or refusing while degraded): the caller answers 503 and the producer retries. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(`store did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
