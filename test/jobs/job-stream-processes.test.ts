/**
 * Job streams across processes on PostgreSQL (only with TEST_DATABASE_URL, and after
 * `npm run build`): the BUILT server started once as ROLE=api and once as ROLE=worker on the same
 * fresh database; a job admitted by the API process and run by the worker process reaches the
 * API process's stream through LISTEN/NOTIFY, every version in order, up to completion, and the
 * worker process delivers its job.completed event exactly once to a webhook on a local HTTPS
 * receiver (test certificate trusted through NODE_EXTRA_CA_CERTS, `*.localhost` resolved to
 * 127.0.0.1 by a preload in both server processes, loopback allowed by EGRESS_ALLOW_CIDRS). The
 * jobs are run with test keys (simulated work, the test balance; the webhook is a test-mode one).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHmac, randomUUID } from 'node:crypto';
import { createTestDatabase } from '../support/databases.js';
import { createTestContext, disposeTestContext, TEST_SECRET_KEY } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { getJob, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { openEventSource, type ReceivedEvent } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { FIXTURE_CERT, HttpsReceiver } from '../support/https-receiver.js';
import { startServer as startBuiltServer, type ServerProcess } from '../support/processes.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { needsDist, needsPostgres } from '../support/requirements.js';

const ADMIN_TOKEN = 'stream-admin-token-0123456789';
/** Preloaded into the server processes: `*.localhost` resolves to 127.0.0.1 (webhook hosts need two labels). */
const LOCALHOST_NAMES = pathToFileURL(resolve('test/support/localhost-names-preload.mjs')).href;
const SPRITE = { prompt: 'a knight', frames: 3, frameWidth: 16, frameHeight: 16 };

const skip = needsPostgres() || needsDist();

/** The built server with the `*.localhost` preload, trusting the receiver's test certificate. */
function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const base = { SECRET_KEY: TEST_SECRET_KEY, NODE_EXTRA_CA_CERTS: FIXTURE_CERT, EGRESS_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_RETRY_BASE_MS: '200', WEBHOOK_RETRY_CAP_MS: '1000' };
  return startBuiltServer({ ...base, ...env }, 30_000, ['--import', LOCALHOST_NAMES]);
}

/** Versions received must be consecutive, each once, ending with the job's final snapshot. */
function assertConsecutive(events: ReceivedEvent[]) {
  const ids = events.map((e) => Number(e.id));
  assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => ids[0]! + i), `consecutive versions: ${ids.join(',')}`);
  for (const e of events) assert.equal(e.data.version, Number(e.id));
}

describe('job streams across processes (PostgreSQL, built server)', { skip }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-stream-procs-'));

  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test('two processes: a job admitted by ROLE=api and finished by ROLE=worker is streamed by the API process to completion; its webhook gets job.completed exactly once', async () => {
    const database = await createTestDatabase('postgres');
    await database.handle.close();
    const receiver = await HttpsReceiver.start();
    const env = { DATABASE_URL: database.url!, DATA_DIR: dataDir, ADMIN_TOKEN };
    const api = await startServer({ ...env, ROLE: 'api' });
    let worker: ServerProcess | undefined;
    try {
      const base = api.base;
      const adminPost = async (path: string, body: unknown) => {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const json = (await res.json()) as any;
        assert.equal(res.status, 200, `${path}: ${JSON.stringify(json)}`);
        return json.data;
      };
      const { user } = await adminPost('/admin/v1/users', { email: `streams-${randomUUID()}@example.com`, name: 'Streams' });
      const { workspace } = await adminPost('/admin/v1/workspaces', { name: 'Streams', plan: 'pro', ownerUserId: user.id });
      // A test key (simulated work, the test balance; issue 34): its webhook is a test-mode one.
      await adminPost(`/admin/v1/workspaces/${workspace.id}/credits`, { amountMillicents: 1_000_000, mode: 'test' });
      const { secret } = await adminPost('/admin/v1/keys', { userId: user.id, workspaceIds: [workspace.id], scopes: [...SCOPES], operations: [...OPERATION_IDS], transports: ['rest'], mode: 'test' });
      const t = { secret, workspace };
      const headers = { authorization: `Bearer ${secret}`, 'x-service-workspace': workspace.id };
      await adminPost(`/admin/v1/workspaces/${workspace.id}/domains`, { hostname: 'hooks.localhost' });
      await adminPost(`/admin/v1/workspaces/${workspace.id}/domains/hooks.localhost/verify`, { method: 'operator' });
      const hook = await fetch(`${base}/v1/webhooks`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url('hooks.localhost'), eventTypes: ['job.completed'] }),
      });
      const hookBody = (await hook.json()) as any;
      assert.equal(hook.status, 200, JSON.stringify(hookBody));
      const webhookId = hookBody.data.webhook.id as string;
      const runRes = await fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify({ operationId: 'sprite.generate', input: SPRITE }),
      });
      const runBody = (await runRes.json()) as any;
      assert.equal(runRes.status, 202, JSON.stringify(runBody));
      const jobId = runBody.data.jobId as string;

      const { es, events } = openEventSource(`${base}/v1/jobs/${jobId}/stream`, t);
      try {
        await waitFor('the first event (pending: no worker yet)', () => events[0]);
        assert.equal(events[0]!.data.status, 'pending');
        worker = await startServer({ ...env, ROLE: 'worker' });
        await waitFor('the completed event', () => events.at(-1)?.data.status === 'completed', 30_000);
        assertConsecutive(events);
        const final = (await (await fetch(`${base}/v1/jobs/${jobId}`, { headers })).json()) as any;
        assert.equal(final.data.status, 'completed');
        assert.equal(events.at(-1)!.data.version, final.data.version);
        // Download URLs are signed when each snapshot is read, so their expiry (whole seconds)
        // can differ by the time between the two reads; the files they point to cannot.
        const unsigned = (output: unknown) => JSON.parse(JSON.stringify(output), (k, v) => (k === 'urlExpiresAt' ? undefined : k === 'url' ? String(v).split('?')[0] : v));
        assert.deepEqual(unsigned(events.at(-1)!.data.output), unsigned(final.data.output));
      } finally {
        es.close();
      }

      // The worker process delivers the job.completed event once: wait for the delivery to be
      // recorded as succeeded, then the receiver holds exactly one request for it.
      const delivery = await waitFor(
        'the delivery succeeded',
        async () => {
          const res = await fetch(`${base}/v1/webhooks/${webhookId}/deliveries`, { headers });
          const items = ((await res.json()) as any).data?.items ?? [];
          return items.find((d: any) => d.status === 'succeeded');
        },
        30_000,
      );
      assert.equal(delivery.attempts, 1);
      assert.equal(receiver.requests.length, 1, 'exactly one request reached the receiver');
      const received = receiver.requests[0]!;
      const event = JSON.parse(received.body);
      assert.equal(event.type, 'job.completed');
      assert.equal(event.data.job.id, jobId);
      assert.equal(received.headers['service-event-id'], event.id);
      assert.equal(delivery.eventId, event.id);
      const signature = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(received.headers['service-signature']));
      assert.ok(signature, String(received.headers['service-signature']));
      assert.equal(signature[2], createHmac('sha256', hookBody.data.secret).update(`${signature[1]}.${received.body}`).digest('hex'), 'signed with the webhook secret');
    } finally {
      await worker?.stop();
      await api.stop();
      await receiver.close();
      await database.dispose();
    }
  });

  test('NOTIFY crosses processes: an API in this process with its safety poll off streams a job run by a ROLE=worker process', async () => {
    const ctx = await createTestContext('postgres');
    let worker: ServerProcess | undefined;
    try {
      ctx.deps.streamSettings.pollMs = 600_000;
      const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
      const res = await run(ctx, t, 'sprite.generate', SPRITE);
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId;
      const { es, events } = openEventSource(`${await baseUrl(ctx)}/v1/jobs/${jobId}/stream`, t);
      try {
        await waitFor('the first event', () => events[0]);
        worker = await startServer({ DATABASE_URL: ctx.database.url!, DATA_DIR: ctx.dataDir, ROLE: 'worker' });
        await waitFor('the completed event', () => events.at(-1)?.data.status === 'completed', 30_000);
        assertConsecutive(events);
        assert.equal(events.at(-1)!.data.version, (await getJob(ctx, t, jobId)).version);
      } finally {
        es.close();
      }
    } finally {
      await worker?.stop();
      await disposeTestContext(ctx);
    }
  });
});
