/** The limits every request meets before any route sees it. */

/** A path parameter, percent-encoded: `pd:` and 255 characters of up to 4 UTF-8 bytes, each written %XX. */
export const MAX_PARAM_CHARS = 3 + 255 * 4 * 3;
