/**
 * Issue 38 (a smaller process): the idle default service (embedded SQLite, no providers file)
 * loads none of the packages only some deployments or requests need: the PostgreSQL driver, the
 * AWS SDK, the `openai` package, the MCP SDK and zod, file-type (upload sniffing), htmlparser2
 * (link previews and scans) and undici (the egress client, on its first outbound request). MCP
 * loads on the first request to /mcp, before that request is answered, and answers it as usual;
 * file-type on the first upload, which is checked as usual. The built server runs with a preload
 * that logs every ES module it loads (support/module-log.mjs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { distMissing, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type ServerProcess } from '../support/processes.js';
import { needsDist } from '../support/requirements.js';

const OPTIONAL_PACKAGES = ['pg', '@aws-sdk', 'openai', '@modelcontextprotocol', 'zod', 'file-type', 'htmlparser2', 'undici'];

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

function packagesLoaded(log: string): Set<string> {
  const found = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    const match = /\/node_modules\/((?:@[^/]+)|[^/]+)\//.exec(url);
    if (match) found.add(match[1]!);
  }
  return found;
}

describe('lazy modules (built server, embedded SQLite)', { skip: distMissing ? needsDist() : false }, () => {
  let dir: string;
  let server: ServerProcess;
  let log: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'was-lazy-'));
    log = join(dir, 'modules.log');
    server = await startServer({
      DATA_DIR: join(dir, 'data'),
      SECRET_KEY: PROCESS_SECRET_KEY,
      NODE_OPTIONS: `--import ${resolve('test/support/module-log.mjs')}`,
      MODULE_LOG: log,
    });
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('idle: PostgreSQL driver, AWS SDK, openai, the MCP SDK and zod are not loaded; /mcp loads MCP on its first request and answers it', async () => {
    const tenant = await seedTenantOverHttp(server.base, 100_000, undefined, { key: { transports: ['rest', 'mcp'] } });
    const idle = packagesLoaded(log);
    assert.ok(idle.has('kysely'), 'the log sees the packages the service does load');
    assert.deepEqual(OPTIONAL_PACKAGES.filter((name) => idle.has(name)), [], 'packages loaded at idle');

    const res = await fetch(`${server.base}/mcp`, {
      method: 'POST',
      headers: { ...tenant.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lazy', version: '1' } } }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { id: number; result: { protocolVersion: string; serverInfo: { name: string } } };
    assert.equal(body.id, 1);
    assert.equal(body.result.protocolVersion, '2025-06-18');
    assert.equal(body.result.serverInfo.name, 'workspace-automation-service');
    const after = packagesLoaded(log);
    assert.ok(after.has('@modelcontextprotocol'), 'the first /mcp request loaded the MCP SDK');
    assert.deepEqual(['pg', '@aws-sdk', 'openai', 'file-type'].filter((name) => after.has(name)), []);

    const form = new FormData();
    form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
    const upload = await fetch(`${server.base}/v1/media/upload`, { method: 'POST', headers: tenant.headers, body: form });
    assert.equal(upload.status, 200, await upload.clone().text());
    const media = (await upload.json()) as { data: { mimeType: string; sizeBytes: number } };
    assert.equal(media.data.mimeType, 'image/png');
    assert.equal(media.data.sizeBytes, PNG.length);
    assert.ok(packagesLoaded(log).has('file-type'), 'the first upload loaded file-type');
  });
});
