/**
 * Capped account notifications: a failing webhook destination raises `webhook.failing` at most
 * once per webhook per UTC day (unique index, insert-or-ignore), readable through
 * GET /admin/v1/workspaces/{id}/notifications and `was notifications list`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../src/admin/cli.js';
import { loadConfig } from '../../src/config.js';
import { raiseWebhookFailing, WEBHOOK_FAILING } from '../../src/modules/notifications/service.js';
import { describeEachDatabase, TEST_ADMIN_TOKEN, TEST_SECRET_KEY, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { seedTenant } from '../support/seed.js';
import { advancePastNextAttempt, createHook, emit, onlyDelivery, WEBHOOK_TEST_ENV, worker, type HookSetup } from '../support/webhooks.js';

const receiver = HttpsReceiver.forThisFile();

function notifications(ctx: TestContext, workspaceId: string, query = '', token = TEST_ADMIN_TOKEN) {
  return ctx.app.inject({ method: 'GET', url: `/admin/v1/workspaces/${workspaceId}/notifications${query}`, headers: { authorization: `Bearer ${token}` } });
}

async function count(ctx: TestContext, webhookId: string): Promise<number> {
  const r = await ctx.deps.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('subject_id', '=', webhookId).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Runs one delivery of a new event to failure (410: failed at once). */
async function failOnce(ctx: TestContext, hook: HookSetup): Promise<void> {
  await emit(ctx, hook.tenant.workspace.id);
  receiver.reply({ status: 410 });
  await worker(ctx).runOnce();
}

/** Runs the CLI in-process on the test database; returns exit code and stdout. */
async function cli(ctx: TestContext, ...argv: string[]): Promise<{ code: number; stdout: string }> {
  const config = loadConfig({ DATABASE_URL: ctx.database.url!, DATA_DIR: ctx.dataDir, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'silent' });
  let stdout = '';
  const write = process.stdout.write;
  process.stdout.write = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === 'string') {
      stdout += chunk;
      return true;
    }
    return (write as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
  } as typeof write;
  try {
    return { code: await runCli(config, argv), stdout };
  } finally {
    process.stdout.write = write;
  }
}

describeEachDatabase(
  'notifications',
  (get) => {
    test('webhook.failing: a delivery that ends failed raises one notification; more failures the same UTC day add none', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await failOnce(ctx, hook);
      assert.equal(await count(ctx, hook.webhookId), 1);
      for (let i = 0; i < 3; i++) await failOnce(ctx, hook);
      assert.equal(await count(ctx, hook.webhookId), 1, 'capped at one per webhook per day');
      const body = assertOk(await notifications(ctx, hook.tenant.workspace.id));
      assert.equal(body.code, 'ADMIN_NOTIFICATIONS_LIST');
      assert.equal(body.data.items.length, 1);
      const n = body.data.items[0];
      assert.deepEqual(Object.keys(n).sort(), ['createdAt', 'details', 'id', 'kind', 'message', 'webhookId', 'workspaceId']);
      assert.equal(n.kind, WEBHOOK_FAILING);
      assert.equal(n.webhookId, hook.webhookId);
      assert.equal(n.workspaceId, hook.tenant.workspace.id);
      assert.match(n.message, /hooks\.localhost/);
      assert.equal(n.details.lastErrorCode, 'WEBHOOK_HTTP_ERROR');
      assert.equal(n.details.lastStatusCode, 410);
      assert.ok(!JSON.stringify(n).includes(hook.secret) && !JSON.stringify(n).includes('whsec_'));
    });

    test('webhook.failing: the next UTC day (fake clock + 1 day) raises a second one, listed newest first', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await failOnce(ctx, hook);
      ctx.clock.advance(86_400_000);
      await failOnce(ctx, hook);
      assert.equal(await count(ctx, hook.webhookId), 2);
      const items = assertOk(await notifications(ctx, hook.tenant.workspace.id)).data.items;
      assert.equal(items.length, 2);
      assert.ok(Date.parse(items[0].createdAt) > Date.parse(items[1].createdAt), 'newest first');
      const page = assertOk(await notifications(ctx, hook.tenant.workspace.id, '?limit=1')).data;
      assert.equal(page.items[0].id, items[0].id);
      const next = assertOk(await notifications(ctx, hook.tenant.workspace.id, `?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`)).data;
      assert.equal(next.items[0].id, items[1].id);
      assert.equal(next.nextCursor, null);
    });

    test('webhook.failing: three failed attempts in a row raise it while the delivery is still being retried', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 }, { status: 500 }, { status: 500 });
      for (let i = 1; i <= 3; i++) {
        await worker(ctx).runOnce();
        assert.equal(await count(ctx, hook.webhookId), i < 3 ? 0 : 1, `after attempt ${i}`);
        await advancePastNextAttempt(ctx, hook.webhookId);
      }
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'pending');
    });

    test('the cap is the database: raising it twice the same day inserts one row (insert-or-ignore)', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const f = { workspaceId: t.workspace.id, webhookId: '0190a000-0000-7000-8000-00000000abcd', hostname: 'h.example', deliveryId: 'd', eventId: 'e', attempts: 1, lastErrorCode: 'WEBHOOK_TIMEOUT', lastStatusCode: null, final: true };
      assert.equal(await raiseWebhookFailing(ctx.deps.db, f, ctx.clock.now()), true);
      assert.equal(await raiseWebhookFailing(ctx.deps.db, f, ctx.clock.now() + 1000), false);
      assert.equal(await count(ctx, f.webhookId), 1);
    });

    test('admin notifications: 401 without the admin token, 404 for an unknown workspace, 400 for a bad id or cursor; other workspaces see none', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      assertError(await notifications(ctx, t.workspace.id, '', 'wrong-token-0123456789'), 401, 'UNAUTHENTICATED');
      assertError(await notifications(ctx, '0190a000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
      assertError(await notifications(ctx, 'nope'), 400, 'INVALID_REQUEST');
      assertError(await notifications(ctx, t.workspace.id, '?cursor=forged.x'), 400, 'INVALID_CURSOR');
      assert.deepEqual(assertOk(await notifications(ctx, t.workspace.id)).data, { items: [], nextCursor: null });
    });

    test('cli notifications list --workspace ID prints the items as JSON', async (t) => {
      const ctx = get();
      if (!ctx.database.url) return t.skip('PGlite is in-process only: the CLI opens its own connection');
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await failOnce(ctx, hook);
      const out = await cli(ctx, 'notifications', 'list', '--workspace', hook.tenant.workspace.id);
      assert.equal(out.code, 0);
      const items = JSON.parse(out.stdout).items;
      assert.equal(items.length, 1);
      assert.equal(items[0].webhookId, hook.webhookId);
      assert.equal(items[0].kind, 'webhook.failing');
    });
  },
  { env: WEBHOOK_TEST_ENV },
);
