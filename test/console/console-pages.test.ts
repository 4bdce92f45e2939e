/**
 * The console's pages as the service serves them (src/console/static.ts): the built files only,
 * with a strict Content-Security-Policy and no inline script or style in the page; index.html for
 * the front end's own paths; 404 in the envelope for unknown API paths and missing assets.
 * Needs the console build (npm run build); skipped with the reason printed without it (CI: fails).
 *
 * Runs with SIMULATE_LIVE off (testKeySuite, issue 34): it runs no operation with a live key, so
 * a production server answers it the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_CSP } from '../../src/console/static.js';
import { describeEachDatabase, testKeySuite } from '../support/harness.js';
import { consoleBuildMissing } from '../support/browser.js';

const skip = consoleBuildMissing();

describeEachDatabase('console pages', (get) => {
  test('every console page is index.html with the strict CSP and no inline script or style', { skip }, async () => {
    const ctx = get();
    for (const url of ['/console', '/console/', '/console/keys', '/console/sign-in', '/console/no/such/page']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-security-policy'], CONSOLE_CSP);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<div id="app"><\/div>/);
      assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
      assert.doesNotMatch(res.body, /<style|\sstyle=/, 'no inline style');
    }
    for (const url of ['/console/%2e%2e/package.json', '/console/assets/%2e%2e/%2e%2e/package.json', '/console/..%2f..%2fpackage.json']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.ok(res.statusCode === 200 || res.statusCode === 404, `${url}: ${res.statusCode}`);
      assert.doesNotMatch(res.body, /workspace-automation-service/, `${url}: never a file outside the build`);
    }
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|\*/);
  });

  test('the built assets are served with long caching; missing assets and unknown API paths are 404', { skip }, async () => {
    const ctx = get();
    const page = await ctx.app.inject({ method: 'GET', url: '/console/' });
    const assets = [...page.body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), page.body);
    for (const url of assets) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['cache-control']), /immutable/);
      assert.match(String(res.headers['content-type']), url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    }
    for (const url of ['/console/assets/nope.js', '/console/api', '/console/api/nope', '/console/api/workspaces']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 'NOT_FOUND');
    }
  });
}, testKeySuite());
