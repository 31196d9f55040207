// needs: chromium
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { openDashboard } from '../helpers/browser.js';
import { startSink } from '../fakes/http-fake.js';
import { REPO_ROOT, spawnServer } from '../helpers/process.js';
import { tempDir } from '../helpers/tmp.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'dashboard-token-of-acme-01';
export const OUTPUT = join(REPO_ROOT, 'test-output');

test('dashboard in a real browser: behind the token, an incident appears live, a dead letter is retried from its button, another dropped', async () => {
  const hook = await startSink(200, {});
  hook.faults = () => ({ status: 503 });
  const dir = tempDir();
  const config = join(dir.path, 'c.yaml');
  writeFileSync(
    config,
    `tenants: [ { id: acme, tokens: [${TOKEN}] } ]\ndelivery: { max_retries: 0 }\nadapters: [ { name: hook, type: webhook, url: "${hook.url}/in" } ]\n`,
  );
  const s = await spawnServer(['--port', '0', '--store', `sqlite:${join(dir.path, 'o.db')}`, '--config', config]);
  let browser: Browser | undefined;
  try {
    const d = await openDashboard(s.url, TOKEN, 'acme');
    browser = d.browser;
    const { page, problems } = d;

    const post = await fetch(`${s.url}/v1/incidents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ element_id: 'olt-7', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'CRITICAL' }),
    });
    const { dedup_key: key } = (await post.json()) as { dedup_key: string };
    const posted = Date.now();
    await page.locator(`#incidents tr[data-key="${key}"]`).waitFor({ timeout: 2000 });
    console.log(`incident shown ${Date.now() - posted} ms after the POST, without a reload`);
    assert.match(await page.locator(`#incidents tr[data-key="${key}"]`).innerText(), /CRITICAL/);
    // The row reads like the alarm, the hash beneath it.
    assert.equal(await page.locator(`#incidents tr[data-key="${key}"] td.incident .what`).innerText(), 'olt-7 · LOS · fiber-cut-12');
    assert.equal(await page.locator(`#incidents tr[data-key="${key}"] td.incident .hash`).innerText(), key);

    // A device last heard from hours ago is listed, flagged stale.
    for (const sequence of [4, 9]) {
      await fetch(`${s.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({
          tenant_id: 'acme',
          device_id: 'pos-17',
          boot_id: 'b1',
          sequence,
          state: 'OFFLINE',
          observed_at: new Date(Date.now() - 3 * 3600_000).toISOString(),
        }),
      });
    }
    const device = page.locator('#devices tr[data-device="pos-17"]', { hasText: 'b1 · 9' });
    await device.waitFor({ timeout: 5000 });
    assert.match(await device.innerText(), /OFFLINE[\s\S]*b1 · 9[\s\S]*stale/);
    assert.equal(await device.locator('td.gaps').innerText(), '4', 'sequences 5..8 missing');

    // Its delivery fails (503, no retries configured): a dead letter with a Retry button.
    const row = page.locator('#dead tbody tr', { hasText: key });
    await row.waitFor({ timeout: 10_000 });
    assert.match(await row.innerText(), /HTTP 503/);
    // The incident's row opens its history: the timeline, and the answer to "why no ticket?".
    await page.locator(`#incidents tr[data-key="${key}"] button.history`).click();
    await page.locator('#timeline-answer', { hasText: 'no ticket: dead letter at hook' }).waitFor({ timeout: 5000 });
    assert.match(await page.locator('#timeline-lines').innerText(), /CREATE \(new\) CRITICAL[\s\S]*create to hook failed \(attempt 1\): .*HTTP 503/);
    assert.equal(await page.locator('#timeline-key').innerText(), key);
    await page.locator('#invariant.ok').waitFor({ timeout: 5000 });
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'dashboard.png'), fullPage: true });

    hook.faults = () => 'ok';
    const before = hook.requests.length;
    // The button's answer, not its label: a retry that lands at once can take the row off the table (the
    // next refresh) before the label "queued" is seen.
    const [retried] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/retry') && r.request().method() === 'POST', { timeout: 5000 }),
      row.locator('button', { hasText: 'Retry' }).click(),
    ]);
    assert.equal(retried.status(), 202, 'the Retry button queued it');
    await until(
      () => hook.requests.length > before,
      10_000,
      () => 'the retried delivery did not arrive',
    );
    assert.equal(hook.requests.at(-1)!.body.key, key);
    await page.locator('#dead tbody tr', { hasText: key }).waitFor({ state: 'detached', timeout: 10_000 });
    await page.locator(`#incidents tr[data-key="${key}"] button.history`).click();
    await page.locator('#timeline-answer', { hasText: 'ticket: delivered to hook' }).waitFor({ timeout: 5000 });

    // A create refused for good, then its close: the row says the close waits behind it; Drop lets it go.
    hook.faults = (q) => (q.body?.action === 'create' ? { status: 400 } : 'ok');
    const refused = await fetch(`${s.url}/v1/incidents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ element_id: 'olt-8', fault_class: 'LOS', root_cause_id: 'fiber-cut-12', severity: 'MAJOR' }),
    });
    const { dedup_key: held } = (await refused.json()) as { dedup_key: string };
    await page.locator('#dead tbody tr', { hasText: held }).waitFor({ timeout: 10_000 });
    await fetch(`${s.url}/v1/incidents/${held}`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
    const heldRow = page.locator('#dead tbody tr', { hasText: held });
    await heldRow.locator('td.waiting', { hasText: '1 held behind it' }).waitFor({ timeout: 10_000 });
    assert.equal(hook.requests.filter((q) => q.body.key === held && q.body.action === 'close').length, 0, 'the close waits');
    // At 1,400 px, with its widest rows shown (a dead letter's error, its held count, its buttons), the delivery
    // panel and the dead letters fit: neither the page nor a table scrolls sideways.
    await page.setViewportSize({ width: 1400, height: 900 });
    const sideways = (await page.evaluate(`[
      document.documentElement.scrollWidth - window.innerWidth,
      ...['#adapters', '#dead'].map((t) => { const box = document.querySelector(t).closest('.scroll'); return box.scrollWidth - box.clientWidth; }),
    ]`)) as number[];
    await page.screenshot({ path: join(OUTPUT, 'dashboard-1400.png'), fullPage: true });
    assert.ok(
      sideways.every((px) => px <= 1),
      `at 1,400 px: page, delivery and dead-letter tables overflow by ${sideways.join(', ')} px`,
    );
    await heldRow.locator('button', { hasText: 'Drop' }).click();
    await until(
      () => hook.requests.some((q) => q.body.key === held && q.body.action === 'close') || null,
      10_000,
      () => 'the close did not go after the drop',
    );
    await page.locator('#dead tbody tr', { hasText: held }).waitFor({ state: 'detached', timeout: 10_000 });

    // Readable on a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    assert.ok(overflow <= 1, `page is ${overflow} px wider than a phone screen`);
    await page.screenshot({ path: join(OUTPUT, 'dashboard-phone.png'), fullPage: true });
    assert.deepEqual(problems, [], 'no console errors');
  } finally {
    await browser?.close();
    await s.stop();
    await hook.close();
    dir.remove();
  }
});
