/**
 * The Node.js lines onceonly supports: 24 (LTS) and 22. Node 20 reached its
 * end of life on 2026-04-30 and some dependencies already ask for 22; a
 * server that still starts on it says so in one line and goes on, since
 * refusing would turn an upgrade reminder into an outage.
 */
export const SUPPORTED_NODE_MAJORS = [22, 24] as const;

/** The one line to print on a Node.js release out of support, or null when `version` is supported. */
export function runtimeSupportLine(version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (!Number.isFinite(major) || major >= SUPPORTED_NODE_MAJORS[0]) return null;
  return `onceonly: Node.js ${major} is out of support (Node.js 20 ended on 2026-04-30): run onceonly on Node.js 24 LTS, or 22; going on.\n`;
}
