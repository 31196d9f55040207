import { type Issue, MAX_ISSUES_SHOWN } from '../core/validation.js';

/**
 * The one error registry: every 4xx/5xx the API sends has a stable code from
 * this table (docs/http-errors.md is tested against it).
 */
export const ERROR_CODES = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  idempotency_in_flight: 409,
  limit_reached: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  shutting_down: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly issues?: Issue[],
    /** seconds, sent as Retry-After (rate_limited) */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
  get status(): number {
    return ERROR_CODES[this.code];
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; issues?: Issue[] };
}

export function errorBody(e: ApiError): ErrorBody {
  const issues =
    e.issues && e.issues.length > MAX_ISSUES_SHOWN
      ? [...e.issues.slice(0, MAX_ISSUES_SHOWN), { path: '', message: `and ${e.issues.length - MAX_ISSUES_SHOWN} more issues, not listed` }]
      : e.issues;
  return { error: { code: e.code, message: e.message, ...(issues ? { issues } : {}) } };
}

/** A size as people write it: whole MiB or KiB when it is one, bytes otherwise. */
export const sizeText = (n: number): string =>
  n % 1_048_576 === 0 ? `${n / 1_048_576} MiB` : n % 1024 === 0 ? `${n / 1024} KiB` : `${n.toLocaleString('en')} bytes`;

/** Maps fastify's own body-parsing errors onto the registry; `bodyBytes` is the server's body bound, to name it. */
export function fromFastifyError(err: { code?: string; statusCode?: number; message: string }, bodyBytes?: number): ApiError {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(
        'payload_too_large',
        `request body is larger than ${bodyBytes === undefined ? 'this server takes' : sizeText(bodyBytes)} (limits.body_bytes)`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'request body must be JSON (Content-Type: application/json)');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_input', 'request body is empty', [{ path: '', message: 'expected a JSON object' }]);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_input', `request body is not valid JSON: ${err.message}`, [{ path: '', message: 'not valid JSON' }]);
  }
  if (err.statusCode === 400) {
    return new ApiError('invalid_input', err.message, [{ path: '', message: err.message }]);
  }
  return new ApiError('internal', 'internal error');
}
