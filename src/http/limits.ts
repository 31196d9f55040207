/** The limits every request meets before any route sees it. */

/** Request bodies over this answer 413. */
export const BODY_LIMIT_BYTES = 512 * 1024;
