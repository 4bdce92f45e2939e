/**
 * The MCP Inspector's command-line mode (`npx @modelcontextprotocol/inspector --cli`, the
 * devDependency, never downloaded: `npx --no` and npm offline) against the BUILT server
 * (`node dist/main.js serve`) over a real socket, as a real client would use it: list the tools
 * with their annotations, run an operation through its own tool, then find the run again by the
 * idempotency key the server drew. `npm test` builds first; run alone, `npm run build` must have run.
 *
 * On every database a server process can use, each with its own server: SQLite (the default
 * DATABASE_URL in DATA_DIR) and PostgreSQL (a fresh database of TEST_DATABASE_URL). Not PGlite:
 * the harness's PGlite lives inside the test process, and a server's configuration takes only
 * sqlite: or postgres:// URLs (PGlite is an in-process dialect of the tests and trials).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { adminPost, distMissing, PROCESS_SECRET_KEY, startServer, type ServerProcess } from '../support/processes.js';

const run = promisify(execFile);

const serverDatabases = testDatabaseNames().filter((name) => name !== 'pglite');

for (const dbName of serverDatabases) describe(`MCP Inspector CLI against the built server [${dbName}]`, { skip: distMissing ? 'dist/main.js missing: run npm run build' : false }, () => {
  let server: ServerProcess;
  let dataDir: string;
  let database: TestDatabase | undefined;
  let workspaceId: string;
  let secret: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'was-inspector-'));
    // The server opens the database itself; PostgreSQL gets a fresh database.
    database = dbName === 'postgres' ? await createTestDatabase('postgres') : undefined;
    server = await startServer({ DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY, ...(database ? { DATABASE_URL: database.url! } : {}) });
    assert.equal(server.lines.find((l) => l.msg === 'service started')?.database, dbName, 'the server runs on the named database');
    const { user } = await adminPost(server.base, '/admin/v1/users', { email: `inspector-${Date.now()}@example.com`, name: 'Inspector' });
    const { workspace } = await adminPost(server.base, '/admin/v1/workspaces', { name: 'Inspector workspace', plan: 'pro', ownerUserId: user.id });
    // A test key (simulated work on its test balance), as an integration developer would use.
    await adminPost(server.base, `/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: 100_000, mode: 'test' });
    const key = await adminPost(server.base, '/admin/v1/keys', { userId: user.id, workspaceIds: [workspace.id], scopes: [...SCOPES], operations: [...OPERATION_IDS], transports: ['mcp'], mode: 'test' });
    workspaceId = workspace.id;
    secret = key.secret;
  });

  after(async () => {
    await server?.stop();
    await database?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** One Inspector CLI invocation; its stdout parsed as JSON. */
  async function inspector(...args: string[]): Promise<any> {
    const { stdout } = await run(
      'npx',
      ['--no', '--', '@modelcontextprotocol/inspector', '--cli', `${server.base}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${secret}`, ...args],
      { env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false', NODE_NO_WARNINGS: '1' }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    return JSON.parse(stdout);
  }

  test('tools/list shows every tool with its title and hints, one per operation; tools/call runs an operation and service_runs_lookup finds it by the key the server drew', async () => {
    const { tools } = await inspector('--method', 'tools/list');
    const names = tools.map((t: { name: string }) => t.name);
    for (const name of ['service_runs_create', 'service_runs_lookup', 'service_jobs_get', 'service_run_chat_generate', 'service_run_image_generate']) assert.ok(names.includes(name), name);
    const chatTool = tools.find((t: { name: string }) => t.name === 'service_run_chat_generate');
    assert.equal(chatTool.annotations.readOnlyHint, false);
    assert.equal(chatTool.annotations.openWorldHint, true);
    assert.match(chatTool.description, /Costs 10 usage points/);
    assert.equal(tools.find((t: { name: string }) => t.name === 'service_balance_get').annotations.readOnlyHint, true);

    const ran = await inspector(
      '--method', 'tools/call',
      '--tool-name', 'service_run_chat_generate',
      '--tool-arg', `workspaceId=${workspaceId}`,
      '--tool-arg', 'messages=[{"role":"user","content":"Hello from the Inspector"}]',
    );
    assert.equal(ran.isError, false, JSON.stringify(ran));
    const body = ran.structuredContent;
    assert.deepEqual([body.code, body.data.kind, body.data.status], ['PUBLIC_TOOLS_RUN', 'result', 'completed']);
    assert.match(body.idempotencyKey, /^[0-9a-f-]{36}$/);

    const found = await inspector('--method', 'tools/call', '--tool-name', 'service_runs_lookup', '--tool-arg', `workspaceId=${workspaceId}`, '--tool-arg', `idempotencyKey=${body.idempotencyKey}`);
    assert.deepEqual([found.structuredContent.data.jobId, found.structuredContent.data.state], [body.data.jobId, 'completed']);

    const refused = await inspector('--method', 'tools/call', '--tool-name', 'service_run_chat_generate', '--tool-arg', `workspaceId=${workspaceId}`, '--tool-arg', 'messages="nope"');
    assert.equal(refused.isError, true);
    assert.equal(JSON.parse(refused.content[0].text).code, 'INVALID_INPUT');
  });
});
