import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A Lua script read once from lua/NAME.lua; called by SHA, sent whole only on NOSCRIPT. */
export interface LuaScript {
  name: string;
  source: string;
  sha: string;
}

const read = (path: string) => readFileSync(new URL(`./lua/${path}.lua`, import.meta.url), 'utf8');

/**
 * A script, with the shared library files it uses (lua/lib/NAME.lua) prepended: Redis has no include.
 * Every script starts with the layout guard (lib/layout.lua): its caller passes its shard count last.
 */
function load(name: string, ...libs: string[]): LuaScript {
  const source = [...['layout', ...libs].map((l) => read(`lib/${l}`)), read(name)].join('\n');
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

export const scripts = {
  readerGeneration: load('reader-generation'),
  decideIncident: load('decide-incident', 'delivery', 'listing', 'record', 'incident'),
  decideIncidents: load('decide-incidents', 'delivery', 'listing', 'record', 'incident'),
  getIncident: load('get-incident'),
  closeIncident: load('close-incident', 'listing', 'record'),
  acknowledgeIncident: load('acknowledge-incident', 'delivery', 'record'),
  escalateIncident: load('escalate-incident', 'delivery', 'record'),
  reconcileIncident: load('reconcile-incident', 'delivery', 'listing', 'record'),
  listIncidents: load('list-incidents', 'listing'),
  trimListings: load('trim-listings', 'listing'),
  applyEvent: load('apply-event'),
  claimWindow: load('claim-window', 'delivery'),
  fanOut: load('fan-out', 'delivery'),
  leaseDeliveries: load('lease-deliveries', 'delivery'),
  settleDelivery: load('settle-delivery', 'delivery'),
  renewLease: load('renew-lease', 'delivery'),
  foldDelivery: load('fold-delivery', 'delivery'),
  retryDeadLetter: load('retry-dead-letter', 'delivery'),
  dropDeadLetter: load('drop-dead-letter', 'delivery'),
  listDeadLetters: load('list-dead-letters'),
  deliveryBacklog: load('delivery-backlog'),
  sweepDeadLetters: load('sweep-dead-letters', 'delivery'),
  requestBegin: load('request-begin'),
  requestAbandon: load('request-abandon'),
  requestKeep: load('request-keep'),
  requestReserve: load('request-reserve', 'request-quota'),
  requestSettle: load('request-settle', 'request-quota'),
  requestRelease: load('request-release', 'request-quota'),
  countLive: load('count-live'),
  ticketFind: load('ticket-find'),
  ticketClaim: load('ticket-claim'),
  ticketForget: load('ticket-forget'),
  heartbeatEnroll: load('heartbeat-enroll'),
  flapRecord: load('flap-record'),
  historyAppend: load('history-append'),
  groupCommit: load('group-commit'),
  groupRemember: load('group-remember'),
  heartbeatPing: load('heartbeat-ping'),
  heartbeatClaim: load('heartbeat-claim'),
  heartbeatClear: load('heartbeat-clear'),
  silenceWrite: load('silence-write'),
  silenceList: load('silence-list'),
  silenceChanged: load('silence-changed'),
  inhibitorPut: load('inhibitor-put'),
  inhibitorFind: load('inhibitor-find'),
  inhibitorRemove: load('inhibitor-remove'),
  adoptRead: load('adopt-read'),
  adoptWrite: load('adopt-write', 'listing'),
  layoutMove: load('layout-move'),
} as const;
