/**
 * Alerts across processes (issue 39 item 7; docs/decisions.md "Alerts": "once, across processes,
 * by a unique index"). Two BUILT API processes share one PostgreSQL database and admit runs of the
 * same workspaces concurrently over real sockets:
 * - a workspace with a monthly budget and a key with a daily budget of exactly 10 maximum costs,
 *   and a low-credits threshold (admitted one by one: budgets are never batched). Its holds cross
 *   50, 80 and 100 % of both budgets and, with the tenth hold, the low-credits threshold;
 * - a workspace without budgets and a low-credits threshold (PostgreSQL's batched admission,
 *   which leaves a batch that would cross the threshold to the one-by-one path).
 * Each alert is raised exactly once: one notification (the cap), one event in the feed (read from
 * either process), one delivery to the webhook subscribed to it, with the data of the one hold
 * that crossed (holds serialise on the workspace and key locks, so the crossing hold is known).
 * A second round after every job is cancelled (the committed amounts fall back to 0 and cross
 * everything again the same day) raises nothing new. Runs only with TEST_DATABASE_URL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../src/deps.js';
import { systemClock } from '../../src/lib/clock.js';
import { sumOpenHolds } from '../../src/modules/billing/store.js';
import { findOperation } from '../../src/operations/registry.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { FIXTURE_CERT, HttpsReceiver } from '../support/https-receiver.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { adminPost, httpJson, PROCESS_ADMIN_TOKEN, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type HttpTenant, type ServerProcess } from '../support/processes.js';
import { parseExposition, value } from '../support/prometheus.js';
import { needsDist, needsPostgres } from '../support/requirements.js';
import { waitUntil } from '../support/wait.js';
import { WEBHOOK_TEST_ENV } from '../support/webhooks.js';
import { startLiveBackend, type LiveBackend } from '../support/live-backend.js';

const receiver = HttpsReceiver.forThisFile();
const MUSIC = (i: number) => ({ prompt: `alert tune ${i} [sim:delay=0]`, durationSeconds: 10 });
const M = findOperation('music.generate')!.price(MUSIC(0)).maximumMillicents;
/** The built-in price of music.generate per second (its only price parameter): M at the live route's price. */
const MUSIC_PER_SECOND_MC = M / MUSIC(0).durationSeconds;
const ALERTS = ['budget.threshold_crossed', 'credits.low'] as const;
/** Runs per round of the budgeted workspace (its budgets admit 10) and of the batched one (its credits admit 20). */
const BUDGETED_RUNS = 60;
const BATCHED_RUNS = 160;
const DAY_MS = 86_400_000;

const skip = needsPostgres() || needsDist();

interface Alert {
  id: string;
  kind: string;
  details: Record<string, any>;
}

describe('alerts across two server processes on one PostgreSQL database [postgres]', { skip }, () => {
  let database: TestDatabase;
  let dataDir: string;
  const processes: ServerProcess[] = [];
  let live: LiveBackend | undefined;

  before(async () => {
    database = await createTestDatabase('postgres');
    dataDir = mkdtempSync(join(tmpdir(), 'was-alerts-'));
    // Alerts are the operator's notifications of live money: live keys, whose music.generate is a
    // paid provider's route (the fake Replicate of support/live-backend.ts, never called: only API
    // processes run) at the built-in price, so that M is its maximum.
    live = await startLiveBackend({
      file: ({ replicate }) => ({
        providers: { rep: { type: 'replicate', baseUrl: replicate.baseUrl, apiKeyEnv: 'LIVE_REPLICATE_TOKEN', privateNetwork: true } },
        operations: { 'music.generate': { provider: 'rep', model: 'owner/music', input: { prompt: '{{prompt}}', duration: '{{durationSeconds}}' }, price: { perSecondMillicents: MUSIC_PER_SECOND_MC } } },
      }),
    });
  });

  after(async () => {
    for (const p of processes) await p.crash();
    if (database) {
      await database.handle.close();
      await database.dispose();
    }
    await live?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(role: 'api' | 'worker'): Promise<ServerProcess> {
    const p = await startServer({
      ROLE: role,
      DATABASE_URL: database.url!,
      DATA_DIR: dataDir,
      SECRET_KEY: PROCESS_SECRET_KEY,
      ...live!.env,
      ...WEBHOOK_TEST_ENV,
      // The webhook receiver's `*.localhost` name and its test-only certificate, in the server processes.
      NODE_OPTIONS: `--import=${pathToFileURL(resolve('test/support/localhost-names-preload.mjs')).href}`,
      NODE_EXTRA_CA_CERTS: FIXTURE_CERT,
    });
    processes.push(p);
    return p;
  }

  /** The workspace's alerts as the operator lists them (its notifications), from `base`. */
  async function notifications(base: string, workspaceId: string): Promise<Alert[]> {
    const r = await httpJson(base, 'GET', `/admin/v1/workspaces/${workspaceId}/notifications?limit=100`, { headers: { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}` } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.data.items as Alert[]).filter((n) => (ALERTS as readonly string[]).includes(n.kind));
  }

  /** The alert events of the feed, from `base`, once `count` are visible (an open transaction elsewhere holds the feed back). */
  async function feed(base: string, t: HttpTenant, count: number): Promise<Array<{ id: string; type: string; data: Record<string, any> }>> {
    const read = async () => {
      const r = await httpJson(base, 'GET', `/v1/events?types=${ALERTS.join(',')}&limit=100`, { headers: t.headers });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data.items as Array<{ id: string; type: string; data: Record<string, any> }>;
    };
    return waitUntil(read, (items) => items.length >= count, `${count} alert events in the feed of ${base}`);
  }

  /** `n` runs of `t`, alternating between the two API processes, all at once. */
  async function admitAtOnce(bases: string[], t: HttpTenant, n: number): Promise<{ admitted: string[]; statuses: Record<number, number>; codes: Set<string> }> {
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        httpJson(bases[i % bases.length]!, 'POST', '/v1/runs', { headers: { ...t.headers, 'idempotency-key': randomUUID() }, body: { operationId: 'music.generate', input: MUSIC(i) } }),
      ),
    );
    const statuses: Record<number, number> = {};
    const codes = new Set<string>();
    for (const r of results) {
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status !== 202) codes.add(String(r.body?.code));
    }
    return { admitted: results.filter((r) => r.status === 202).map((r) => r.body.data.jobId as string), statuses, codes };
  }

  /** A webhook subscribed to the alerts; `hostname` (one the test certificate names) is verified in the workspace, so one per workspace. */
  async function webhook(base: string, t: HttpTenant, hostname: string, path: string): Promise<string> {
    await adminPost(base, `/admin/v1/workspaces/${t.workspaceId}/domains`, { hostname });
    await adminPost(base, `/admin/v1/workspaces/${t.workspaceId}/domains/${hostname}/verify`, { method: 'operator' });
    const r = await httpJson(base, 'POST', '/v1/webhooks', { headers: t.headers, body: { url: receiver.url(hostname, path), eventTypes: [...ALERTS] } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.webhook.id as string;
  }

  test('two API processes admitting at once raise each budget.threshold_crossed and credits.low exactly once', async () => {
    // Budget periods and the credits.low cap turn over at UTC midnight: start well clear of it, so
    // both rounds fall in one day (a state wait on the clock, at most two minutes).
    await waitUntil(() => DAY_MS - (Date.now() % DAY_MS), (left) => left > 180_000, 'the UTC day to have more than three minutes left', 200_000, 1000);
    receiver.reset();
    const [one, two] = [await start('api'), await start('api')];
    const bases = [one!.base, two!.base];
    const limits = { pointsPerMinute: 1_000_000, waitingJobs: 1_000 };
    const budgeted = await seedTenantOverHttp(one!.base, 12 * M, limits, {
      settings: { budgets: { monthlyMillicents: 10 * M }, lowCreditsMillicents: 3 * M },
      key: { budgets: { dailyMillicents: 10 * M } },
    });
    const batched = await seedTenantOverHttp(two!.base, 20 * M, limits, { settings: { lowCreditsMillicents: 5 * M + 1 } });
    const hooks = { budgeted: await webhook(one!.base, budgeted, 'hooks.localhost', '/budgeted'), batched: await webhook(two!.base, batched, 'hooks-b.localhost', '/batched') };

    const deps = { db: database.handle.db, clock: systemClock } as unknown as Deps;
    for (let round = 1; round <= 2; round++) {
      const [a, b] = await Promise.all([admitAtOnce(bases, budgeted, BUDGETED_RUNS), admitAtOnce(bases, batched, BATCHED_RUNS)]);
      assert.equal(a.admitted.length, 10, `round ${round}, budgeted: the budgets admit 10 maximum costs; statuses ${JSON.stringify(a.statuses)}`);
      assert.deepEqual([...a.codes], ['BUDGET_EXCEEDED'], `round ${round}, budgeted: refusals`);
      assert.equal(b.admitted.length, 20, `round ${round}, batched: the credits admit 20 maximum costs; statuses ${JSON.stringify(b.statuses)}`);
      assert.deepEqual([...b.codes], ['INSUFFICIENT_CREDITS'], `round ${round}, batched: refusals`);

      // The notifications (the cap): exactly the crossings, each with the data of the hold that made it.
      for (const base of bases) {
        const got = await notifications(base, budgeted.workspaceId);
        const keyBudget = { scope: 'key', keyId: budgeted.keyId, period: 'day' };
        const wsBudget = { scope: 'workspace', period: 'month' };
        const expected = [
          ...[50, 80, 100].flatMap((p) =>
            [keyBudget, wsBudget].map((budget) => ({
              kind: 'budget.threshold_crossed',
              details: { budget, thresholdPercent: p, spentMillicents: 0, reservedMillicents: (p / 10) * M, limitMillicents: 10 * M },
            })),
          ),
          { kind: 'credits.low', details: { spendableMillicents: 2 * M, thresholdMillicents: 3 * M } },
        ];
        const key = (x: { kind: string; details: unknown }) => JSON.stringify([x.kind, x.details]);
        assert.deepEqual(got.map((n) => ({ kind: n.kind, details: n.details })).sort((x, y) => key(x).localeCompare(key(y))), expected.sort((x, y) => key(x).localeCompare(key(y))), `round ${round}, budgeted workspace's alerts (from ${base})`);
        const low = await notifications(base, batched.workspaceId);
        assert.deepEqual(
          low.map((n) => ({ kind: n.kind, details: n.details })),
          [{ kind: 'credits.low', details: { spendableMillicents: 5 * M, thresholdMillicents: 5 * M + 1 } }],
          `round ${round}, batched workspace's alerts (from ${base}): once, by the hold that took spendable credits below the threshold`,
        );
      }

      // The feed: one event per notification, under its id, from either process.
      for (const [t, count] of [[budgeted, 7], [batched, 1]] as const) {
        const ids = (await notifications(one!.base, t.workspaceId)).map((n) => n.id).sort();
        for (const base of bases) {
          const events = await feed(base, t, count);
          assert.deepEqual(events.map((e) => e.id).sort(), ids, `round ${round}: the feed of ${base} holds each alert once`);
        }
      }
      assert.equal(await sumOpenHolds(database.handle.db, budgeted.workspaceId), 10 * M);
      assert.equal(await sumOpenHolds(database.handle.db, batched.workspaceId), 20 * M);
      await assertLedgerInvariants(deps, budgeted.workspaceId);
      await assertLedgerInvariants(deps, batched.workspaceId);

      if (round === 1) {
        // Every hold released unused: the committed amounts fall to 0, and the next round crosses every threshold again.
        for (const [t, ids] of [[budgeted, a.admitted], [batched, b.admitted]] as const) {
          for (const [i, id] of ids.entries()) {
            const r = await httpJson(bases[i % 2]!, 'POST', `/v1/jobs/${id}/cancel`, { headers: t.headers });
            assert.equal(r.status, 200, JSON.stringify(r.body));
          }
          assert.equal(await sumOpenHolds(database.handle.db, t.workspaceId), 0);
        }
      }
    }

    // The workspace without budgets went through batched admission, and the batches that would
    // have crossed its threshold fell back to one by one (only budgets are never batched).
    const batches = { batched: 0, fallback: 0 };
    for (const base of bases) {
      const metrics = parseExposition(await (await fetch(`${base}/metrics`)).text());
      for (const outcome of ['batched', 'fallback'] as const) batches[outcome] += value(metrics, 'batches_total', { kind: 'admission', outcome });
    }
    assert.ok(batches.batched > 0 && batches.fallback > 0, `admission batches of both outcomes: ${JSON.stringify(batches)}`);

    // Deliveries: a worker process sends each alert once to the webhook subscribed to it.
    await start('worker');
    const alerts = {
      budgeted: (await notifications(one!.base, budgeted.workspaceId)).map((n) => n.id).sort(),
      batched: (await notifications(one!.base, batched.workspaceId)).map((n) => n.id).sort(),
    };
    for (const [name, webhookId] of Object.entries(hooks) as Array<[keyof typeof hooks, string]>) {
      const rows = await waitUntil(
        () => database.handle.db.selectFrom('webhook_deliveries').select(['event_id', 'status', 'last_error_code']).where('webhook_id', '=', webhookId).execute(),
        (rs) => rs.length >= alerts[name].length && rs.every((r) => r.status === 'succeeded' || r.status === 'failed'),
        `every delivery of the ${name} webhook to end`,
      );
      assert.ok(rows.every((r) => r.status === 'succeeded'), `${name}: every delivery succeeded: ${JSON.stringify(rows)}`);
      assert.deepEqual(rows.map((r) => r.event_id).sort(), alerts[name], `${name}: one delivery per alert`);
      const received = receiver.requests.filter((r) => r.path === `/${name}`).map((r) => JSON.parse(r.body) as { id: string; type: string });
      assert.deepEqual([...new Set(received.map((r) => r.id))].sort(), alerts[name], `${name}: the receiver got every alert`);
    }
    for (const p of processes) assert.equal(await p.stop(), 0, 'graceful exit');
  });
});
