import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a store operation runs for, without threading it through every
 * layer: set once per HTTP request, read where an audit row is written.
 */
export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

export const currentRequestId = () => requestContext.getStore()?.requestId ?? 'none';
