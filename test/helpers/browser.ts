import { type Browser, chromium, type Page } from 'playwright-core';

// Debian's Chromium driven by playwright-core (no browser is downloaded).
// The flags keep it off this machine's closed network.
export const launchChromium = () =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

export interface Dashboard {
  browser: Browser;
  page: Page;
  /** console errors and page errors so far (the first stream's 401, before the token, is the page working) */
  problems: string[];
}

/** Opens the dashboard at `url` in a desktop-sized window, gives the tenant's token at its login, and waits until it is live. */
export async function openDashboard(url: string, token: string, tenant: string): Promise<Dashboard> {
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/401/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(url);
  await page.locator('#login').waitFor({ state: 'visible', timeout: 10_000 });
  await page.fill('#token', token);
  await page.click('#login button');
  await page.locator('#status', { hasText: `live · ${tenant}` }).waitFor({ timeout: 10_000 });
  return { browser, page, problems };
}
