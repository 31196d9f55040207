import { ForbiddenError } from '../access/tenants.js';
import { ValidationError } from '../core/validation.js';
import { BOUNDARY_REJECT_REASONS } from '../observe/event-accounting.js';
import { StoreRefusedError, StoreUnavailableError } from '../store/errors.js';
import { ApiError, fromFastifyError } from './errors.js';

/** Any error a request (or one line of a batch) can end in, as the registry's code and message. */
export function toApiError(err: unknown, bodyBytes?: number): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ValidationError) return new ApiError('invalid_input', err.message, err.issues);
  if (err instanceof StoreUnavailableError) return new ApiError('unavailable', err.message);
  // The store answered and refused this request: a full store is worth a retry later, any other refusal is not.
  if (err instanceof StoreRefusedError) return new ApiError(err.full ? 'unavailable' : 'internal', err.message);
  if (err instanceof ForbiddenError) return new ApiError('forbidden', err.message);
  return fromFastifyError(err as { code?: string; statusCode?: number; message: string }, bodyBytes);
}

/** A refused event, as the events accounting counts it. */
export function eventRefusal(code: string): (typeof BOUNDARY_REJECT_REASONS)[number] {
  if (code === 'invalid_input') return 'invalid';
  return (BOUNDARY_REJECT_REASONS as readonly string[]).includes(code) ? (code as (typeof BOUNDARY_REJECT_REASONS)[number]) : 'internal';
}
