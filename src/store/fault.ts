/**
 * What kind of failure a shared store's error is: `transport` (unreachable,
 * fail open), `full` (it takes no writes from anyone: 503 and retry), or
 * `refused` (this request alone fails). Its own file, so that each backend's
 * errors.ts can name it without importing store/errors.ts, which imports them.
 */
export type StoreFault = 'transport' | 'full' | 'refused';
