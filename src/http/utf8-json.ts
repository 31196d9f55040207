import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

export const NOT_UTF8 = 'the body is not valid UTF-8: send text encoded as UTF-8';

/**
 * JSON bodies are read as bytes and refused (400) unless they are valid
 * UTF-8, before they are parsed. Decoding invalid bytes would replace each
 * with U+FFFD, so two different identities (bytes 0xff and 0xfe in an
 * element_id) would become one key and the second fault would be suppressed.
 * The parse itself is fastify's own, with its prototype-poisoning checks.
 */
export function utf8JsonParser(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (req, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new ApiError('invalid_input', NOT_UTF8, [{ path: '', message: 'not valid UTF-8' }]), undefined);
      return;
    }
    parse(req, bytes.toString('utf8'), done);
  });
}
