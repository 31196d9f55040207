import { MAX_ALIAS, type OgParse, parseAliasIdentifier } from './schema.js';

/**
 * An alert's `id` as onceonly answers it: the episode's start (base 36) and
 * the alias (base64url). A read by id then needs no index, and the id of an
 * earlier episode of the alias finds nothing, as a closed alert's id finds no
 * open one at Opsgenie. Opaque to a client, as Opsgenie's own ids are.
 */
export const ogAlertId = (alias: string, createdAt: number): string => `${createdAt.toString(36)}.${Buffer.from(alias, 'utf8').toString('base64url')}`;

/** The alert a read names: by alias (any open episode), or by an id onceonly answered (that episode only). */
export interface OgAlertRef {
  alias: string;
  createdAt?: number;
}

const ID = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{1,2800})$/;

/**
 * `{identifier}` and `identifierType` of a read: `alias`, or `id` (Opsgenie's
 * default) as onceonly answered it. Opsgenie's `tiny` ids are a counter
 * onceonly does not keep: refused, naming the types it takes.
 */
export function parseAlertRef(identifier: string, identifierType: unknown): OgParse<OgAlertRef> {
  if (identifierType === 'alias') {
    const alias = parseAliasIdentifier(identifier, 'alias');
    return alias.ok ? { ok: true, value: { alias: alias.value } } : alias;
  }
  if (identifierType !== undefined && identifierType !== 'id')
    return {
      ok: false,
      errors: { identifierType: `identifierType must be id or alias (given: ${JSON.stringify(String(identifierType).slice(0, 20))}): tiny ids are not kept.` },
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
