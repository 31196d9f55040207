import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A Lua script read once from lua/NAME.lua; called by SHA, sent whole only on NOSCRIPT. */
export interface LuaScript {
  name: string;
  source: string;
  sha: string;
}

function load(name: string): LuaScript {
  const source = readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
  return { name, source, sha: createHash('sha1').update(source).digest('hex') };
}

export const scripts = {
  decideIncident: load('decide-incident'),
  getIncident: load('get-incident'),
  closeIncident: load('close-incident'),
  reconcileIncident: load('reconcile-incident'),
  applyEvent: load('apply-event'),
  claimWindow: load('claim-window'),
} as const;
