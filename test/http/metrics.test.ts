/**
 * /metrics after a scripted workload (issue 19, "Metrics"; docs/operations.md lists the metrics),
 * on every test database: a synchronous job completed, a queued job failed, its webhook delivery
 * retried then delivered, another given up, 429s by details.limit, an open job stream, the pool,
 * housekeeping. Values are read from the Prometheus text /metrics answers (parsed strictly) and
 * compared with what the workload did; times come from the fake clock, so every duration and age
 * is exact. Tenants that run operations use test keys (simulated work, the test balance); the
 * others run nothing and stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { balance, drain, getJob, run } from '../support/jobs.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { createHook, onlyDelivery, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { baseUrl } from '../support/base-url.js';
import { apiHeaders, frameReader, streamGet } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import { parseExposition, samples, value, type Exposition } from '../support/prometheus.js';
import { createMetrics, MAX_LABEL_VALUES } from '../../src/metrics/index.js';
import { runMaintenanceOnce } from '../../src/worker/maintenance.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { FakeClock } from '../../src/lib/clock.js';
import { startMetricsListener } from '../../src/metrics/listener.js';
import { PROCESS_SECRET_KEY, startServer } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';
import type { Database } from '../../src/db/schema.js';
import { needsDist } from '../support/requirements.js';

const receiver = HttpsReceiver.forThisFile();

const CHAT = { messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 50 };
const MUSIC = (directives = '') => ({ prompt: `a calm tune ${directives}`, durationSeconds: 5 });
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function scrape(ctx: TestContext): Promise<Exposition> {
  const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parseExposition(res.body);
}

async function settings(ctx: TestContext, workspaceId: string, body: unknown) {
  const res = await admin(ctx, `/admin/v1/workspaces/${workspaceId}/settings`, body);
  assert.equal(res.statusCode, 200, res.body);
}

describeEachDatabase(
  'metrics',
  (get) => {
    test('workload: a completed job, a failed job and a retried delivery appear by name, labels and value (jobs, providers, credits, webhooks)', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver, { tenant: await seedTenant(ctx.deps, { mode: 'test' }), eventTypes: ['job.failed'] });
      const t = hook.tenant;
      await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 500_000, mode: 'test' });
      const before = await scrape(ctx);
      for (const op of ['chat.generate', 'music.generate']) {
        assert.equal(value(before, 'jobs_waiting', { operation: op }), 0, `every operation is reported, 0 when idle: ${op}`);
        assert.equal(value(before, 'jobs_running', { operation: op }), 0);
        assert.equal(value(before, 'jobs_oldest_waiting_age_seconds', { operation: op }), 0);
      }
      assert.equal(value(before, 'credits_reserved_millicents'), 0);
      assert.equal(value(before, 'metrics_database_up'), 1);

      // A synchronous job completes at once.
      const chat = await run(ctx, t, 'chat.generate', CHAT);
      assert.equal(chat.statusCode, 200, chat.body);
      // A queued job waits: the queue gauges see it, and its reservation.
      const music = await run(ctx, t, 'music.generate', MUSIC('[sim:fail=MODEL_REFUSED]'));
      assert.equal(music.statusCode, 202, music.body);
      ctx.clock.advance(30_000);
      let m = await scrape(ctx);
      assert.equal(value(m, 'jobs_waiting', { operation: 'music.generate' }), 1);
      assert.equal(value(m, 'jobs_oldest_waiting_age_seconds', { operation: 'music.generate' }), 30, 'admitted 30 s ago on the fake clock');
      assert.equal(value(m, 'jobs_waiting', { operation: 'chat.generate' }), 0);
      const held = (await balance(ctx, t)).reservedMillicents;
      assert.ok(held > 0);
      assert.equal(value(m, 'credits_reserved_millicents'), held, 'the open hold of the waiting job');
      assert.equal(value(m, 'credit_holds_open'), 1);

      // The worker runs it; the simulated provider refuses it.
      assert.equal(await drain(ctx), 1);
      assert.equal((await getJob(ctx, t, music.json().data.jobId)).status, 'failed');
      m = await scrape(ctx);
      const sim = { provider: 'simulated' };
      assert.equal(value(m, 'jobs_finished_total', { operation: 'chat.generate', ...sim, status: 'completed', error_code: 'none' }), 1);
      assert.equal(value(m, 'jobs_finished_total', { operation: 'music.generate', ...sim, status: 'failed', error_code: 'MODEL_REFUSED' }), 1);
      assert.equal(value(m, 'job_attempt_duration_seconds_count', { operation: 'chat.generate', ...sim, status: 'completed', error_code: 'none' }), 1);
      assert.equal(value(m, 'job_attempt_duration_seconds_count', { operation: 'music.generate', ...sim, status: 'failed', error_code: 'MODEL_REFUSED' }), 1);
      assert.equal(value(m, 'job_attempt_duration_seconds_sum', { operation: 'music.generate', ...sim, status: 'failed', error_code: 'MODEL_REFUSED' }), 0, 'the fake clock did not move during the attempt');
      assert.equal(value(m, 'provider_calls_total', { ...sim, operation: 'chat.generate', outcome: 'ok' }), 1);
      assert.equal(value(m, 'provider_calls_total', { ...sim, operation: 'music.generate', outcome: 'error' }), 1);
      assert.equal(value(m, 'provider_errors_total', { ...sim, operation: 'music.generate', error_code: 'MODEL_REFUSED' }), 1);
      assert.equal(value(m, 'provider_call_duration_seconds_count', { ...sim, operation: 'music.generate' }), 1);
      assert.equal(value(m, 'provider_call_duration_seconds_bucket', { ...sim, operation: 'music.generate', le: '+Inf' }), 1);
      assert.equal(value(m, 'jobs_waiting', { operation: 'music.generate' }), 0);
      assert.equal(value(m, 'jobs_running', { operation: 'music.generate' }), 0);
      assert.equal(value(m, 'jobs_oldest_waiting_age_seconds', { operation: 'music.generate' }), 0);
      assert.equal(value(m, 'credits_reserved_millicents'), 0, 'the hold was released by the failure');
      assert.equal(value(m, 'credit_holds_open'), 0);

      // Its job.failed event is delivered: refused once with 500 (retried), then accepted.
      assert.equal(value(m, 'webhook_deliveries_backlog', { status: 'pending' }), 1);
      assert.equal(value(m, 'webhook_deliveries_backlog', { status: 'delivering' }), 0);
      assert.equal(value(m, 'webhook_oldest_due_delivery_age_seconds'), 0, 'due now, waited 0 s');
      const eventAt = ctx.clock.now();
      receiver.reply({ status: 500 });
      assert.equal(await worker(ctx).runOnce(), 1);
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'pending');
      const nextAttempt = Number(row.next_attempt_at_ms);
      m = await scrape(ctx);
      assert.equal(value(m, 'webhook_delivery_attempts_total', { outcome: 'retried', error_code: 'WEBHOOK_HTTP_ERROR' }), 1);
      assert.equal(value(m, 'webhook_oldest_due_delivery_age_seconds'), 0, 'the retry is not due yet');
      assert.equal(value(m, 'webhook_deliveries_backlog', { status: 'pending' }), 1);
      ctx.clock.set(nextAttempt + 4_000);
      m = await scrape(ctx);
      assert.equal(value(m, 'webhook_oldest_due_delivery_age_seconds'), 4, 'due for 4 s');
      assert.equal(await worker(ctx).runOnce(), 1);
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'succeeded');
      m = await scrape(ctx);
      assert.equal(value(m, 'webhook_delivery_attempts_total', { outcome: 'succeeded', error_code: 'none' }), 1);
      assert.equal(value(m, 'webhook_delivery_attempts_total', { outcome: 'retried', error_code: 'WEBHOOK_HTTP_ERROR' }), 1);
      assert.equal(value(m, 'webhook_attempt_duration_seconds_count'), 2);
      assert.equal(value(m, 'webhook_delivery_latency_seconds_count'), 1);
      assert.equal(value(m, 'webhook_delivery_latency_seconds_sum'), (nextAttempt + 4_000 - eventAt) / 1000, 'from the event to the successful attempt');
      assert.equal(value(m, 'webhook_deliveries_backlog', { status: 'pending' }), 0);
      assert.equal(value(m, 'webhook_oldest_due_delivery_age_seconds'), 0);
      assert.equal(samples(m, 'webhook_deliveries_given_up_total').length, 0, 'nothing given up yet');

      // A delivery refused for good (410) is given up at once.
      const failing = await run(ctx, t, 'music.generate', MUSIC('[sim:fail=PROVIDER_ERROR]'));
      assert.equal(failing.statusCode, 202, failing.body);
      await drain(ctx);
      receiver.reply({ status: 410 });
      assert.equal(await worker(ctx).runOnce(), 1);
      m = await scrape(ctx);
      assert.equal(value(m, 'webhook_delivery_attempts_total', { outcome: 'failed', error_code: 'WEBHOOK_HTTP_ERROR' }), 1);
      assert.equal(value(m, 'webhook_deliveries_given_up_total', { error_code: 'WEBHOOK_HTTP_ERROR' }), 1);
      assert.equal(value(m, 'jobs_finished_total', { operation: 'music.generate', ...sim, status: 'failed', error_code: 'PROVIDER_ERROR' }), 1);

      // A cancelled job is an outcome too (the provider it was routed to, no errorCode).
      const cancelled = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal((await call(ctx, 'POST', `/v1/jobs/${cancelled.json().data.jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200);
      m = await scrape(ctx);
      assert.equal(value(m, 'jobs_finished_total', { operation: 'music.generate', ...sim, status: 'cancelled', error_code: 'none' }), 1);
    });

    test('low cardinality: no label value is an id, a workspace or a URL, and job labels are operation, provider, status, error_code', async () => {
      const ctx = get();
      const m = await scrape(ctx);
      assert.ok(m.samples.length > 0);
      for (const s of m.samples) {
        for (const [name, v] of Object.entries(s.labels)) {
          assert.doesNotMatch(v, UUID, `${s.name}{${name}} carries an id`);
          assert.doesNotMatch(v, /^https?:|localhost/, `${s.name}{${name}} carries a URL`);
        }
      }
      for (const name of ['jobs_finished_total', 'provider_calls_total', 'webhook_delivery_attempts_total', 'jobs_waiting']) {
        const keys = new Set(samples(m, name).flatMap((s) => Object.keys(s.labels)));
        assert.ok(keys.size > 0, name);
        for (const k of keys) assert.ok(['operation', 'provider', 'status', 'error_code', 'outcome'].includes(k), `${name} label ${k}`);
      }
    });

    test('names and units: counters end in _total, durations and ages in _seconds, money in _millicents; HELP says global or per process', async () => {
      const ctx = get();
      const m = await scrape(ctx);
      const expected: Record<string, string> = {
        jobs_waiting: 'gauge',
        jobs_running: 'gauge',
        jobs_oldest_waiting_age_seconds: 'gauge',
        jobs_finished_total: 'counter',
        job_attempt_duration_seconds: 'histogram',
        provider_calls_total: 'counter',
        provider_errors_total: 'counter',
        provider_call_duration_seconds: 'histogram',
        webhook_delivery_attempts_total: 'counter',
        webhook_attempt_duration_seconds: 'histogram',
        webhook_delivery_latency_seconds: 'histogram',
        webhook_deliveries_backlog: 'gauge',
        webhook_oldest_due_delivery_age_seconds: 'gauge',
        webhook_deliveries_given_up_total: 'counter',
        credits_reserved_millicents: 'gauge',
        credit_holds_open: 'gauge',
        http_429_responses_total: 'counter',
        job_streams_open: 'gauge',
        mcp_task_streams_open: 'gauge',
        db_pool_connections_in_use: 'gauge',
        db_pool_connections_max: 'gauge',
        db_pool_waiting_requests: 'gauge',
        housekeeping_lag_seconds: 'gauge',
        housekeeping_passes_total: 'counter',
        housekeeping_last_success_timestamp_seconds: 'gauge',
        metrics_database_up: 'gauge',
      };
      for (const [name, type] of Object.entries(expected)) assert.equal(m.type.get(name), type, `TYPE of ${name}`);
      assert.equal(samples(m, 'housekeeping_last_success_timestamp_seconds').length, 0, 'absent before the first pass of this process (not 0, which would read as 1970)');
      for (const name of ['jobs_waiting', 'jobs_running', 'jobs_oldest_waiting_age_seconds', 'webhook_deliveries_backlog', 'credits_reserved_millicents', 'housekeeping_lag_seconds']) {
        assert.match(m.help.get(name)!, /same for every process/, `${name} is global`);
      }
      for (const name of ['jobs_finished_total', 'provider_calls_total', 'webhook_delivery_attempts_total', 'http_429_responses_total', 'job_streams_open', 'mcp_task_streams_open', 'db_pool_connections_in_use']) {
        assert.match(m.help.get(name)!, /this process/, `${name} is per process`);
      }
    });

    test('429s are counted by code and details.limit: POINTS_MINUTE, WAITING_JOBS, WORKSPACE_BUDGET_DAY', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 500_000, mode: 'test' });
      const before = await scrape(ctx);
      const count = (x: Exposition, code: string, limit: string) => value(x, 'http_429_responses_total', { code, limit });

      // Waiting jobs: one allowed, the second run is QUEUE_FULL.
      await settings(ctx, t.workspace.id, { limits: { waitingJobs: 1 } });
      assert.equal((await run(ctx, t, 'music.generate', MUSIC())).statusCode, 202);
      const full = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal(full.statusCode, 429, full.body);
      assert.equal(full.json().details.limit, 'WAITING_JOBS');
      await drain(ctx);

      // The workspace's daily budget: a run whose maximum cost does not fit.
      await settings(ctx, t.workspace.id, { budgets: { dailyMillicents: 1 } });
      const budget = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal(budget.statusCode, 429, budget.body);
      assert.equal(budget.json().details.limit, 'WORKSPACE_BUDGET_DAY');

      // Usage points: 3 per minute, then refused twice.
      await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: 3 } });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await call(ctx, 'GET', '/v1/usage', { secret: t.secret, workspaceId: t.workspace.id })).statusCode);
      const refused = statuses.filter((s) => s === 429).length;
      assert.ok(refused >= 2, `refused: ${statuses.join(',')}`);

      const after = await scrape(ctx);
      assert.equal(count(after, 'QUEUE_FULL', 'WAITING_JOBS') - count(before, 'QUEUE_FULL', 'WAITING_JOBS'), 1);
      assert.equal(count(after, 'BUDGET_EXCEEDED', 'WORKSPACE_BUDGET_DAY') - count(before, 'BUDGET_EXCEEDED', 'WORKSPACE_BUDGET_DAY'), 1);
      assert.equal(count(after, 'RATE_LIMITED', 'POINTS_MINUTE') - count(before, 'RATE_LIMITED', 'POINTS_MINUTE'), refused);
      const total = (x: Exposition) => samples(x, 'http_429_responses_total').reduce((a, s) => a + s.value, 0);
      const all429 = (x: Exposition) => samples(x, 'http_requests_total', { status: '429' }).reduce((a, s) => a + s.value, 0);
      assert.equal(total(after) - total(before), all429(after) - all429(before), 'every 429 answered is counted once, with its limit');
    });

    test('job_streams_open counts the streams this process holds open', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 500_000, mode: 'test' });
      const queued = await run(ctx, t, 'music.generate', MUSIC());
      assert.equal(queued.statusCode, 202, queued.body);
      assert.equal(value(await scrape(ctx), 'job_streams_open'), 0);
      const { response, request } = streamGet(`${await baseUrl(ctx)}/v1/jobs/${queued.json().data.jobId}/stream`, apiHeaders(t, { accept: 'text/event-stream' }));
      const res = await response;
      assert.equal(res.status, 200);
      const first = await frameReader(res).next();
      assert.equal(first?.event, 'job');
      assert.equal(value(await scrape(ctx), 'job_streams_open'), 1);
      request.destroy();
      await waitFor('the stream to close', async () => value(await scrape(ctx), 'job_streams_open') === 0);
      await drain(ctx);
    });

    test('mcp_task_streams_open counts the standing MCP streams (GET /mcp) this process holds open, apart from job streams', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 500_000 });
      assert.equal(value(await scrape(ctx), 'mcp_task_streams_open'), 0);
      const { response, request } = streamGet(`${await baseUrl(ctx)}/mcp`, {
        accept: 'text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: `Bearer ${t.secret}`,
        'x-service-workspace': t.workspace.id,
      });
      const res = await response;
      assert.equal(res.status, 200);
      await frameReader(res).next(); // the priming event: the stream is open
      const open = await scrape(ctx);
      assert.equal(value(open, 'mcp_task_streams_open'), 1);
      assert.equal(value(open, 'job_streams_open'), 0, 'not counted as a job stream');
      request.destroy();
      await waitFor('the stream to close', async () => value(await scrape(ctx), 'mcp_task_streams_open') === 0);
    });

    test('db_pool gauges: the pool size, and a connection held by a transaction is in use', async () => {
      const ctx = get();
      const m = await scrape(ctx);
      const max = value(m, 'db_pool_connections_max');
      assert.equal(max, ctx.dbName === 'postgres' ? 20 : 1, 'harness pools: 20 connections on PostgreSQL, the one connection otherwise');
      assert.ok(value(m, 'db_pool_connections_in_use') <= max);
      const inUse = async () => (await ctx.deps.metrics.registry.getSingleMetric('db_pool_connections_in_use')!.get()).values[0]!.value;
      let release!: () => void;
      const holding = new Promise<void>((r) => (release = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const trx = ctx.deps.db.transaction().execute(async () => {
        entered();
        await holding;
      });
      await inside;
      assert.ok((await inUse()) >= 1, 'the open transaction holds a connection');
      release();
      await trx;
    });

    test('housekeeping: lag per task from the database, passes and last success of this process', async () => {
      const ctx = get();
      // Clear what earlier tests left due, so the records below are the oldest.
      ctx.clock.advance(25 * 3600_000);
      await runMaintenanceOnce(ctx.deps);
      let m = await scrape(ctx);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'idempotency_purge' }), 0);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'credit_expiry' }), 0);
      const passes = value(m, 'housekeeping_passes_total', { outcome: 'ok' });
      assert.ok(passes >= 1);
      assert.equal(value(m, 'housekeeping_last_success_timestamp_seconds'), ctx.clock.now() / 1000);

      const t = await seedTenant(ctx.deps, { mode: 'test' });
      await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100_000, expiresAt: ctx.clock.now() + 3600_000, mode: 'test' });
      const res = await call(ctx, 'POST', '/v1/runs', {
        secret: t.secret,
        workspaceId: t.workspace.id,
        headers: { 'idempotency-key': randomUUID() },
        body: { operationId: 'chat.generate', input: CHAT },
      });
      assert.equal(res.statusCode, 200, res.body);
      // 25 hours later: the allocation expired 24 h ago, the idempotency record 1 h ago, and no pass ran.
      ctx.clock.advance(25 * 3600_000);
      m = await scrape(ctx);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'credit_expiry' }), 24 * 3600);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'idempotency_purge' }), 3600);
      await runMaintenanceOnce(ctx.deps);
      m = await scrape(ctx);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'credit_expiry' }), 0);
      assert.equal(value(m, 'housekeeping_lag_seconds', { task: 'idempotency_purge' }), 0);
      assert.equal(value(m, 'housekeeping_passes_total', { outcome: 'ok' }), passes + 1);
      assert.equal(value(m, 'housekeeping_last_success_timestamp_seconds'), ctx.clock.now() / 1000);
    });

    test('METRICS_PORT listener: GET /metrics is the same registry in Prometheus text, /healthz answers, anything else is 404 or 405', async () => {
      const ctx = get();
      const listener = await startMetricsListener(ctx.deps.metrics, '127.0.0.1', 0, (err) => assert.fail(String(err)));
      try {
        const base = `http://127.0.0.1:${listener.address.port}`;
        const res = await fetch(`${base}/metrics`);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        const m = parseExposition(await res.text());
        assert.equal(value(m, 'metrics_database_up'), 1);
        assert.equal(m.type.get('jobs_finished_total'), 'counter');
        assert.ok(value(m, 'jobs_finished_total', { operation: 'chat.generate', provider: 'simulated', status: 'completed', error_code: 'none' }) >= 1, 'the counts of this process');
        assert.equal((await fetch(`${base}/healthz`)).status, 200);
        assert.equal((await fetch(`${base}/v1/usage`)).status, 404, 'no API here');
        assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405);
      } finally {
        await listener.close();
      }
    });
  },
  testKeySuite({ env: WEBHOOK_TEST_ENV }),
);

test(
  'a ROLE=worker process with METRICS_PORT serves its own /metrics (its housekeeping counters, process metrics), and stops cleanly',
  { skip: needsDist() },
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-metrics-'));
    const worker = await startServer({ ROLE: 'worker', METRICS_PORT: '0', DATABASE_URL: `sqlite:${join(dataDir, 'service.db')}`, DATA_DIR: dataDir, SECRET_KEY: PROCESS_SECRET_KEY });
    try {
      const started = worker.lines.find((l) => l.msg === 'service started')!;
      assert.equal(started.listening, false, 'no API listener');
      const port = Number(started.metricsPort);
      assert.ok(port > 0, JSON.stringify(started));
      const m = await waitUntil(
        async () => parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        (x) => value(x, 'housekeeping_passes_total', { outcome: 'ok' }) >= 1,
        'the first housekeeping pass of the worker',
      );
      assert.ok(value(m, 'housekeeping_last_success_timestamp_seconds') > 0);
      assert.equal(value(m, 'metrics_database_up'), 1);
      assert.ok(samples(m, 'process_cpu_seconds_total').length === 1, 'process metrics of a server process');
      assert.equal(await worker.stop(), 0);
    } finally {
      await worker.crash();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test('database gauges: a failed read leaves them out and sets metrics_database_up 0; /metrics still answers', async () => {
  const errors: unknown[] = [];
  const down = {
    selectFrom: () => {
      throw new Error('database down');
    },
  } as unknown as Kysely<Database>;
  const metrics = createMetrics({
    processMetrics: false,
    sources: { db: down, clock: new FakeClock(0), poolStats: () => ({ max: 1, inUse: 0, waiting: 0 }), operations: ['chat.generate'], onDatabaseError: (err) => errors.push(err) },
  });
  const m = parseExposition(await metrics.registry.metrics());
  assert.equal(value(m, 'metrics_database_up'), 0);
  assert.equal(samples(m, 'jobs_waiting').length, 0, 'no stale or invented values');
  assert.equal(samples(m, 'credits_reserved_millicents').length, 0);
  assert.equal(value(m, 'db_pool_connections_max'), 1, 'the pool gauges do not need the database');
  assert.equal(errors.length, 1, 'one read per scrape, logged once');
});

test('label values are bounded: an unknown error code past MAX_LABEL_VALUES is counted as other; a malformed one too', () => {
  const metrics = createMetrics({ processMetrics: false });
  for (let i = 0; i < MAX_LABEL_VALUES + 5; i++) metrics.observeWebhookGivenUp(`CODE_${i}`);
  metrics.observeWebhookGivenUp('not a code {}');
  return metrics.registry.metrics().then((text) => {
    const m = parseExposition(text);
    const given = samples(m, 'webhook_deliveries_given_up_total');
    assert.equal(given.length, MAX_LABEL_VALUES + 1, 'the first values, then other');
    assert.equal(value(m, 'webhook_deliveries_given_up_total', { error_code: 'other' }), 6);
  });
});
