/** What Opsgenie's parsers share: their answer (errors by field, as Opsgenie names them) and two checks. */
export type OgParse<T> = { ok: true; value: T } | { ok: false; errors: Record<string, string> };

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Cut to `max` code points, never through a surrogate pair. */
export const cut = (s: string, max: number) => (s.length <= max ? s : Array.from(s).slice(0, max).join(''));
