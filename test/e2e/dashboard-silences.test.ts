// needs: chromium
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startSink } from '../fakes/http-fake.js';
import { openDashboard } from '../helpers/browser.js';
import { spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'dashboard-silence-token-0001';
const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("dashboard's silences panel in a real browser: silence a live incident from its row, see it listed, expire it, and its held update goes out", async () => {
  const hook = await startSink(200, {});
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(config, `tenants: [ { id: acme, tokens: [${TOKEN}] } ]\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`);
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  const post = (body: unknown) =>
    fetch(`${s.url}/v1/incidents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ dedup_key: string; muted: unknown }>);
  const sent = () => hook.requests.filter((r) => r.body.data?.element_id === 'olt-3').map((r) => `${r.body.action}:${r.body.severity}`);
  let browser: Browser | undefined;
  try {
    const d = await openDashboard(s.url, TOKEN, 'acme');
    browser = d.browser;
    const { page, problems } = d;

    const incident = { element_id: 'olt-3', fault_class: 'LOS', root_cause_id: 'cut-3', severity: 'MINOR' };
    const { dedup_key: key } = await post(incident);
    await until(
      () => sent().length === 1 || null,
      10_000,
      () => 'the create was not delivered',
    );
    const row = page.locator(`#incidents tr[data-key="${key}"]`);
    await row.waitFor({ timeout: 5000 });
    await row.locator('button', { hasText: 'Silence 1 h' }).click();
    await row.locator('button', { hasText: 'silenced' }).waitFor({ timeout: 5000 });

    const listed = page.locator('#silences tbody tr', { hasText: `dedup_key="${key}"` });
    await listed.waitFor({ timeout: 5000 });
    assert.match(await listed.innerText(), /active[\s\S]*dashboard[\s\S]*silenced from the dashboard \(MINOR\)/);

    const update = await post({ ...incident, severity: 'MAJOR' });
    assert.equal((update.muted as { by: string }).by, 'silence', 'the API says the key is muted');
    await quiet(2500);
    assert.deepEqual(sent(), ['create:MINOR'], 'the update is held');

    await listed.locator('button', { hasText: 'Expire' }).click();
    await page.locator('#silences tbody tr', { hasText: `dedup_key="${key}"` }).waitFor({ state: 'detached', timeout: 5000 });
    await until(
      () => sent().length === 2 || null,
      10_000,
      () => 'the held update was not released',
    );
    assert.deepEqual(sent(), ['create:MINOR', 'update:MAJOR']);

    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    assert.ok(overflow <= 1, `page is ${overflow} px wider than a phone screen`);
    assert.deepEqual(problems, [], 'no console errors');
  } finally {
    await browser?.close();
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
