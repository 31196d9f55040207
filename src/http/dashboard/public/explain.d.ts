/** One event of a key's history as GET /v1/incidents/{key}/history answers it. */
export type ViewEvent = { at: string; type: string } & Record<string, unknown>;

/** One event as one line of the timeline (without its time). */
export function describeEvent(e: ViewEvent): string;
/** The answer: the ticket(s) the key made and where, or why none was made. */
export function answer(key: string, events: readonly ViewEvent[]): string;
/** The timeline, one event a line, then a blank line and the answer. */
export function explain(key: string, events: readonly ViewEvent[]): string[];
