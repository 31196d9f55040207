/**
 * The CLI keeps one nextTick queue entry alive so V8 keeps that literal's
 * hidden classes (src/cli/keep-tick-shape.ts). That helps only while Node
 * builds its entries as that literal: the async id symbols, then callback
 * and args. A Node that builds them another way fails here, and the module
 * can go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keptTickEntry } from '../../src/cli/keep-tick-shape.js';

test("the entry kept is one of Node's nextTick literals: the async id symbols (and, since 22, the context frame's), then callback and args", async () => {
  await new Promise<void>((resolve) => process.nextTick(resolve));
  const entry = keptTickEntry();
  assert.ok(entry, 'an entry is kept after the first tick');
  assert.deepEqual(
    Reflect.ownKeys(entry).map((k) => (typeof k === 'symbol' ? `symbol:${k.description}` : k)),
    // Own keys list strings before symbols, each in the order they were made. Node 22 and 24 add the
    // async context frame's symbol (20 had none): still one literal with computed keys.
    [
      'callback',
      'args',
      'symbol:async_id_symbol',
      'symbol:trigger_async_id_symbol',
      ...(Number(process.versions.node.split('.')[0]) >= 22 ? ['symbol:kAsyncContextFrame'] : []),
    ],
  );
});
