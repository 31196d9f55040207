/** The limits every request meets before any route sees it. */

/** A path parameter, percent-encoded: `og:` and an alias of 512 characters of up to 4 UTF-8 bytes, each written %XX. */
export const MAX_PARAM_CHARS = 3 + 512 * 4 * 3;
