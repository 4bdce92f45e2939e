/**
 * link.preview through POST /v1/runs: a real page fetched through the egress guard, synchronously.
 * These are live keys on purpose (a test key's link.preview is simulated and reaches no page), with
 * SIMULATE_LIVE off (testKeySuite): live keys run link.preview for real, as in production.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { run } from '../support/jobs.js';

let server: Server;
let base = '';
before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    if (req.url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<html><head><title>Fallback</title><meta property="og:title" content="Héllo page">
        <meta name="description" content="A page"><meta property="og:image" content="/img.png">
        <meta property="og:site_name" content="Local"><link rel="icon" href="/fav.png"></head><body></body></html>`);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describeEachDatabase(
  'link.preview run (allowed loopback)',
  (get) => {
    test('link.preview answers 200 with {metadata} and relative URLs resolved; the job is recorded completed', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 10_000 });
      const res = await run(ctx, t, 'link.preview', { url: `${base}/page` });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      assert.equal(data.kind, 'result');
      assert.deepEqual(data.result, {
        metadata: { title: 'Héllo page', description: 'A page', image: `${base}/img.png`, url: `${base}/page`, siteName: 'Local', favicon: `${base}/fav.png` },
      });
      assert.equal(data.costMillicents, 50);
      const job = (await call(ctx, 'GET', `/v1/jobs/${data.jobId}`, { secret: t.secret, workspaceId: t.workspace.id })).json().data;
      assert.equal(job.status, 'completed');
      assert.equal(job.toolSlug, 'link');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('a page that answers 404 gives a failed job with errorCode LINK_HTTP_ERROR, and the fetch is still accounted', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 10_000 });
      const res = await run(ctx, t, 'link.preview', { url: `${base}/missing` });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().data.status, 'failed');
      assert.equal(res.json().data.errorCode, 'LINK_HTTP_ERROR');
      assert.equal(res.json().data.result, null);
      assert.equal(res.json().data.costMillicents, 50, 'the page answered: the fetch is charged');
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('consumed work only: a redirect to a blocked address is charged (the first page answered); a server never reached is not', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 10_000 });
      const redirected = (await run(ctx, t, 'link.preview', { url: `${base}/to-metadata` })).json().data;
      assert.deepEqual([redirected.status, redirected.errorCode, redirected.costMillicents], ['failed', 'LINK_BLOCKED', 50]);
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const refused = (await run(ctx, t, 'link.preview', { url: `http://127.0.0.1:${port}/` })).json().data;
      assert.deepEqual([refused.status, refused.errorCode, refused.costMillicents], ['failed', 'LINK_UNREACHABLE', 0]);
      const balance = (await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id })).json().data;
      assert.equal(balance.totalMillicents, 10_000 - 50);
      assert.equal(balance.reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });
  },
  testKeySuite({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.1/32' } }),
);

describeEachDatabase('link.preview run (default egress policy)', (get) => {
  test('a private address is never fetched: errorCode LINK_BLOCKED', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    for (const url of [`${base}/page`, 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://0x7f000001/']) {
      const res = await run(ctx, t, 'link.preview', { url });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().data.status, 'failed', url);
      assert.equal(res.json().data.errorCode, 'LINK_BLOCKED', url);
      assert.equal(res.json().data.costMillicents, 0, `${url}: nothing was fetched, nothing is charged`);
    }
    assert.equal((await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id })).json().data.totalMillicents, 10_000);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });

  test('non-http(s) URLs are invalid input', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'javascript:alert(1)', 'not a url']) {
      const res = await run(ctx, t, 'link.preview', { url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().code, 'INVALID_INPUT');
    }
  });
}, testKeySuite());
