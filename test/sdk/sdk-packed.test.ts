/**
 * The SDK as users get it (issue 39, item 6): `npm pack` of packages/sdk, installed from the
 * tarball into an empty folder, imported through both entry points by a program of that folder
 * (not from this repository's sources), running a queued job against the built server and
 * reading its verified output; `was-client` from the installed package's bin; and the browser
 * entry loaded in Chromium from the installed files, calling the same server through a
 * same-origin page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type HttpTenant, type ServerProcess } from '../support/processes.js';
import { needsDist, requireOrSkip } from '../support/requirements.js';
import { findChromium, launchChromium } from '../support/browser.js';

const skip = needsDist();
const dirs: string[] = [];

function npm(args: string[], cwd: string): string {
  const r = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
  assert.equal(r.status, 0, `npm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('the SDK as users install it (npm pack, then npm install of the tarball)', { skip }, () => {
  let server: ServerProcess;
  let tenant: HttpTenant;
  let app = '';

  before(async () => {
    const packDir = mkdtempSync(join(tmpdir(), 'was-sdk-pack-'));
    app = mkdtempSync(join(tmpdir(), 'was-sdk-user-'));
    dirs.push(packDir, app);
    npm(['pack', resolve('packages/sdk'), '--pack-destination', packDir, '--silent'], resolve('.'));
    const tarball = readdirSync(packDir).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote a tarball');
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'sdk-user', version: '1.0.0', private: true, type: 'module' }));
    npm(['install', '--prefer-offline', join(packDir, tarball)], app);
    const dataDir = mkdtempSync(join(tmpdir(), 'was-sdk-packed-data-'));
    dirs.push(dataDir);
    server = await startServer({ DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY, SIMULATED_DELAY_MS: '0' });
    // A test key: the SDK runs simulated work, as an integration developer's would.
    tenant = await seedTenantOverHttp(server.base, 10_000_000, undefined, { mode: 'test' });
  });

  after(async () => {
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('the tarball holds the built entry points, the bin and no sources or tests', () => {
    const installed = join(app, 'node_modules', 'workspace-automation-sdk');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.equal(manifest.name, 'workspace-automation-sdk');
    const top = readdirSync(installed).sort();
    assert.ok(top.includes('dist') && top.includes('bin'), top.join(','));
    assert.ok(!top.includes('src') && !top.includes('scripts'), `no sources shipped: ${top.join(',')}`);
  });

  test('both entry points import in a program of the installing folder and run a queued job with a verified output', async () => {
    writeFileSync(
      join(app, 'main.js'),
      `import * as browserEntry from 'workspace-automation-sdk';
import { createClient } from 'workspace-automation-sdk/node';
const [baseUrl, apiKey, workspaceId] = process.argv.slice(2);
const client = createClient({ baseUrl, apiKey, workspaceId });
const run = await client.runs.complete('image.generate', { prompt: 'a red kite' });
const usage = await client.usage.get();
const signed = browserEntry.signWebhook ? 'signWebhook' : '';
process.stdout.write(JSON.stringify({ entries: [typeof browserEntry.createClient, typeof browserEntry.verifyWebhook, signed], status: run.status, jobId: run.job?.id, images: run.result?.images?.length, cost: run.costMillicents, plan: usage.plan }));
`,
    );
    const r = spawnSync(process.execPath, ['main.js', server.base, tenant.secret, tenant.workspaceId], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.entries, ['function', 'function', 'signWebhook']);
    assert.equal(out.status, 'completed');
    assert.match(out.jobId, /^[0-9a-f-]{36}$/);
    assert.ok(out.images >= 1, 'the complete output was read and parsed');
    assert.ok(out.cost > 0);
    assert.equal(out.plan, 'pro');
  });

  test('was-client runs from the installed bin', () => {
    const bin = join(app, 'node_modules', '.bin', 'was-client');
    const r = spawnSync(bin, ['run', 'chat.generate', '--input', '{"messages":[{"role":"user","content":"hi"}]}', '--wait'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: app, SERVICE_URL: server.base, SERVICE_API_KEY: tenant.secret, SERVICE_WORKSPACE: tenant.workspaceId },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /completed|Simulated/);
  });

  test('the browser entry, loaded in Chromium from the installed files, calls the server', async (t) => {
    const missing = requireOrSkip(findChromium() ? false : 'needs Chromium (Debian package chromium)');
    if (missing) return t.skip(missing);
    const dist = join(app, 'node_modules', 'workspace-automation-sdk', 'dist');
    const upstream = new URL(server.base);
    const page = `<!doctype html><html lang="en"><head><title>sdk</title><script type="module" src="/app.js"></script></head><body><p id="out">waiting</p></body></html>`;
    const script = `import { createClient } from '/sdk/index.js';
const client = createClient({ baseUrl: location.origin, apiKey: ${JSON.stringify(tenant.secret)}, workspaceId: ${JSON.stringify(tenant.workspaceId)} });
try {
  const run = await client.runs.complete('chat.generate', { messages: [{ role: 'user', content: 'from a browser' }] });
  const usage = await client.usage.get();
  document.getElementById('out').textContent = JSON.stringify({ status: run.status, reply: typeof run.result?.message?.content, plan: usage.plan });
} catch (err) {
  document.getElementById('out').textContent = 'error: ' + err;
}
`;
    const site: Server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      if (url === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      if (url.startsWith('/sdk/')) {
        const file = resolve(dist, `.${url.slice(4)}`);
        if (!file.startsWith(dist) || extname(file) !== '.js') return void res.writeHead(404).end();
        try {
          return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
        } catch {
          return void res.writeHead(404).end();
        }
      }
      // The API, same-origin for the page: forwarded to the built server as it is.
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: url, method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
    const launched = await launchChromium();
    try {
      const browserPage = await launched.browser.newPage();
      const errors: string[] = [];
      browserPage.on('pageerror', (err) => errors.push(err.message));
      await browserPage.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      await browserPage.waitForFunction("document.getElementById('out').textContent !== 'waiting'", undefined, { timeout: 60_000 });
      const text = (await browserPage.textContent('#out')) ?? '';
      assert.deepEqual(errors, []);
      assert.deepEqual(JSON.parse(text), { status: 'completed', reply: 'string', plan: 'pro' }, text);
    } finally {
      await launched.close();
      await new Promise((r) => site.close(r));
    }
  });
});
