/**
 * Test mode from the SDK and was-client (issue 34; docs/sdk.md "Test mode"): `client.mode` from the
 * secret's prefix, `client.testHelpers.triggerEvent` and `was-client trigger TYPE` against the built
 * server on a real socket; a live key is refused (403 TEST_MODE_ONLY, exit code 4).
 */
import { waitUntil } from '../support/wait.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '../../packages/sdk/src/node.js';
import { modeOfSecret } from '../../packages/sdk/src/index.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { adminPost, httpJson, PROCESS_ADMIN_TOKEN } from '../support/processes.js';
import { describeEachServer, runCli } from '../support/sdk.js';

test('rule "client.mode": test for a wask_test_ secret, live otherwise', () => {
  assert.equal(modeOfSecret(`wask_test_${'a'.repeat(43)}`), 'test');
  assert.equal(modeOfSecret(`wask_${'a'.repeat(43)}`), 'live');
  assert.equal(createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: `wask_test_${'b'.repeat(43)}`, workspaceId: '00000000-0000-4000-8000-000000000000' }).mode, 'test');
  assert.equal(createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: `wask_${'b'.repeat(43)}`, workspaceId: '00000000-0000-4000-8000-000000000000' }).mode, 'live');
});

describeEachServer('test mode from the SDK and was-client', (get) => {
  /** A key of the suite's workspace in `mode` (the suite's own tenant key is a test key). */
  async function keyOf(mode: 'live' | 'test'): Promise<string> {
    const { server, tenant } = get();
    const ws = await httpJson(server.base, 'GET', `/admin/v1/workspaces/${tenant.workspaceId}`, { headers: { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}` } });
    const ownerUserId = (ws.body as any).data.workspace.ownerUserId as string;
    const { secret } = await adminPost(server.base, '/admin/v1/keys', {
      userId: ownerUserId,
      workspaceIds: [tenant.workspaceId],
      scopes: [...SCOPES],
      operations: [...OPERATION_IDS],
      transports: ['rest'],
      mode,
    });
    return secret as string;
  }
  const testKey = () => keyOf('test');

  test('rule "test helpers": triggerEvent and `was-client trigger` send a sample event to the test webhooks; a live key gets 403 TEST_MODE_ONLY (exit 4)', async () => {
    const { server, tenant, env } = get();
    const secret = await testKey();
    const client = createClient({ baseUrl: server.base, apiKey: secret, workspaceId: tenant.workspaceId });
    assert.equal(client.mode, 'test');
    const sent = await client.testHelpers.triggerEvent('job.completed');
    assert.deepEqual([sent.event.type, sent.event.livemode, sent.event.workspaceId, sent.deliveries], ['job.completed', false, tenant.workspaceId, 0]);
    // Read until the feed shows it (it may hold events back while other suites' transactions run).
    const feed = await waitUntil(() => client.events.list({ types: ['job.completed'] }), (page) => page.items.some((e) => e.id === sent.event.id), 'the sample in the test feed', 10_000);
    assert.ok(feed.items.some((e) => e.id === sent.event.id), 'the sample is in the test feed');

    const viaCli = await runCli(['trigger', 'media.created', '--json'], { ...env, SERVICE_API_KEY: secret });
    assert.equal(viaCli.code, 0, viaCli.stderr);
    const out = JSON.parse(viaCli.stdout);
    assert.equal(out.event.type, 'media.created');
    assert.equal(out.event.livemode, false);
    const text = await runCli(['trigger', 'credits.low'], { ...env, SERVICE_API_KEY: secret });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^sent credits\.low [0-9a-f-]{36} to 0 test webhooks/);

    const live = await runCli(['trigger', 'job.completed'], { ...env, SERVICE_API_KEY: await keyOf('live') });
    assert.equal(live.code, 4, `${live.stdout}${live.stderr}`);
    assert.match(live.stderr, /TEST_MODE_ONLY/);
  });
});
