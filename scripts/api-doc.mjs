#!/usr/bin/env node
// docs/api.md, generated from the routes' own docs: starts a server on the
// memory store, reads its /openapi.json and renders it for people. The test
// suite fails when the committed file and the routes differ.
//   npm run api:doc
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { startServer } from '../dist/app/start.js';
import { apiMarkdown } from '../dist/http/openapi/markdown.js';

const server = await startServer({ port: 0, host: '127.0.0.1', store: 'memory:', logger: pino({ level: 'silent' }) });
try {
  const doc = await (await fetch(`${server.url}/openapi.json`)).json();
  const text = apiMarkdown(doc);
  writeFileSync(new URL('../docs/api.md', import.meta.url), text);
  console.log(`wrote docs/api.md (${text.split('\n').length} lines)`);
} finally {
  await server.close();
}
