import { createHash } from 'node:crypto';
import { MAX_ALIAS, type OgParse, parseAliasIdentifier } from './schema.js';

/**
 * An alert's `id` as onceonly answers it: the episode's start (base 36) and
 * the alias (base64url). A read by id then needs no index, and the id of an
 * earlier episode of the alias finds nothing, as a closed alert's id finds no
 * open one at Opsgenie. Opaque to a client, as Opsgenie's own ids are.
 */
export const ogAlertId = (alias: string, createdAt: number): string => `${createdAt.toString(36)}.${Buffer.from(alias, 'utf8').toString('base64url')}`;

/**
 * An alert's `tinyId`: the short number people type ("ack 4711"). Opsgenie
 * counts them per account; onceonly derives one from the id (8 decimal
 * digits of its SHA-256), so it needs no counter in the store and is the
 * same on every replica. Two open alerts of a tenant may share one (about
 * one chance in 200 among 1,000 open alerts): a call by that tiny id is then
 * refused, naming the id and the alias to use instead, never guessed.
 */
export const ogTinyId = (alias: string, createdAt: number): string =>
  (BigInt(`0x${createHash('sha256').update(ogAlertId(alias, createdAt)).digest('hex').slice(0, 15)}`) % 100_000_000n).toString();

/** The alert a read names: by alias (any open episode), or by an id onceonly answered (that episode only). */
export interface OgAlertRef {
  alias: string;
  createdAt?: number;
}

/** What a call names before a tiny id is looked up among the open alerts. */
export type OgNamed = OgAlertRef | { tiny: string };

const TINY = /^(0|[1-9][0-9]{0,7})$/;

const ID = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{1,2800})$/;

/**
 * `{identifier}` and `identifierType` of a read: `alias`, `tiny` (as a read
 * answered it), or `id` (Opsgenie's default) as onceonly answered it.
 */
export function parseAlertRef(identifier: string, identifierType: unknown): OgParse<OgNamed> {
  if (identifierType === 'alias') {
    const alias = parseAliasIdentifier(identifier, 'alias');
    return alias.ok ? { ok: true, value: { alias: alias.value } } : alias;
  }
  if (identifierType === 'tiny')
    return TINY.test(identifier)
      ? { ok: true, value: { tiny: identifier } }
      : { ok: false, errors: { identifier: 'A tiny id is a number of at most 8 digits, as a read answered it.' } };
  if (identifierType !== undefined && identifierType !== 'id')
    return {
      ok: false,
      errors: { identifierType: `identifierType must be id, tiny or alias (given: ${JSON.stringify(String(identifierType).slice(0, 20))}).` },
    };
  const m = ID.exec(identifier);
  const alias = m ? Buffer.from(m[2]!, 'base64url').toString('utf8') : '';
  // A decoding that does not give the same text back (not UTF-8, not canonical) is not an id onceonly made.
  if (!m || ogAlertId(alias, Number.parseInt(m[1]!, 36)) !== identifier || alias.length > MAX_ALIAS || !parseAliasIdentifier(alias, 'alias').ok)
    return {
      ok: false,
      errors: { identifier: 'The identifier is not an alert id onceonly answered; name the alert by its alias with identifierType=alias.' },
    };
  return { ok: true, value: { alias, createdAt: Number.parseInt(m[1]!, 36) } };
}
