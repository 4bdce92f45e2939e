/**
 * /docs, the page rendering the OpenAPI document, loads in Chromium under its own strict
 * Content-Security-Policy without a single violation (no inline script; the one <style> of the
 * Swagger UI bundle is allowed by its hash) and shows the public operations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createTestContext, disposeTestContext } from '../support/harness.js';
import { findChromium, launchChromium } from '../support/browser.js';
import { requireOrSkip } from '../support/requirements.js';

const skip = requireOrSkip(findChromium() ? false : 'needs Chromium (Debian package chromium)');

test('/docs renders the public operations in Chromium with no Content-Security-Policy violation', { skip }, async () => {
  const ctx = await createTestContext('sqlite');
  const launched = await launchChromium();
  try {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (ctx.app.server.address() as AddressInfo).port;
    const page = await launched.browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    const response = await page.goto(`http://127.0.0.1:${port}/docs/`);
    assert.match(response?.headers()['content-security-policy'] ?? '', /style-src 'self' 'sha256-/);
    assert.doesNotMatch(response?.headers()['content-security-policy'] ?? '', /unsafe-inline/);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const operations = await page.locator('.opblock').count();
    assert.ok(operations >= 20, `the page lists the public operations (${operations})`);
    assert.deepEqual(problems, []);
  } finally {
    await launched.close();
    await disposeTestContext(ctx);
  }
});
