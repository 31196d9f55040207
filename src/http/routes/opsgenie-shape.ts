import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../errors.js';

/**
 * How onceonly's drop-in for Opsgenie's Alert API answers, as Opsgenie
 * does: its 202, its error body, and their documentation.
 */

export const OPSGENIE_ALERTS = '/v2/alerts';

/** Seconds since the request arrived, as Opsgenie's `took`. */
export const took = (reply: FastifyReply) => Number((reply.elapsedTime / 1000).toFixed(3));

/** Opsgenie's error body, which its clients log: `message`, `took`, `requestId`, and `errors` by field for a body it cannot process. */
export function opsgenieError(e: ApiError, req: FastifyRequest, reply: FastifyReply) {
  const message =
    e.code === 'unauthorized'
      ? 'Could not authenticate'
      : e.code === 'invalid_input' && e.message.startsWith('request body is not valid JSON')
        ? 'Could not parse request body, please check your JSON.'
        : e.message;
  return { message, took: took(reply), requestId: req.id };
}

export const accepted = (req: FastifyRequest, reply: FastifyReply) =>
  reply.code(202).send({ result: 'Request will be processed', took: took(reply), requestId: req.id });
export const unprocessable = (req: FastifyRequest, reply: FastifyReply, errors: Record<string, string>) =>
  reply.code(422).send({ message: 'Request body is not processable. Please check the errors.', errors, took: took(reply), requestId: req.id });

export const processing = {
  description: "Opsgenie's answer: the request is taken (the decision is made and durable before it is sent)",
  schema: {
    type: 'object',
    required: ['result', 'took', 'requestId'],
    properties: { result: { const: 'Request will be processed' }, took: { type: 'number' }, requestId: { type: 'string' } },
  },
};
export const refused = {
  description: "Opsgenie's error body: `message`, `errors` by field, `took`, `requestId`",
  schema: {
    type: 'object',
    required: ['message', 'took', 'requestId'],
    properties: {
      message: { type: 'string' },
      errors: { type: 'object', additionalProperties: { type: 'string' } },
      took: { type: 'number' },
      requestId: { type: 'string' },
    },
  },
};
export const identifierQuery = {
  identifierType: {
    description:
      '`id` (the default: an id a read answered, that episode only), `tiny` (a `tinyId` a read answered, that episode only) or `alias` (any open episode)',
    schema: { enum: ['id', 'alias', 'tiny'] },
    required: false,
  },
};

/** A list's 200: `data` an array, with `took` and `requestId`. */
export const listed = (description: string) => ({
  description,
  schema: {
    type: 'object',
    required: ['data', 'took', 'requestId'],
    properties: { data: { type: 'array', items: { type: 'object' } }, took: { type: 'number' }, requestId: { type: 'string' } },
  },
});

/** `responders` or `visibleTo` of a create, as Opsgenie takes them. */
export const responderList = {
  type: 'array',
  maxItems: 50,
  items: {
    type: 'object',
    required: ['type'],
    properties: { type: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' }, username: { type: 'string' } },
  },
};
