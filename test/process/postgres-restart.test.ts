/**
 * PostgreSQL restarts under load (issue 32, item 3). The BUILT server runs as an API process and a
 * worker process on a PRIVATE PostgreSQL cluster that this test makes with initdb and restarts
 * with pg_ctl (test/support/private-postgres.ts), twice: a fast shutdown (sessions ended with
 * 57P01) and an immediate one (the server killed, sessions cut, crash recovery at start).
 * Meanwhile clients start queued runs (retrying each Idempotency-Key until acknowledged), read
 * jobs and the balance, follow job streams (SSE) and receive webhook deliveries; /readyz is polled.
 *
 * What must hold (docs/operations.md, "PostgreSQL outage"):
 * - every answer is a documented one: 200/202, or 503 UNAVAILABLE with Retry-After while the
 *   database is unreachable; never a 500, never a request without an answer by its deadline;
 * - /readyz answers 503 while the database is down and 200 again after;
 * - neither process dies; the job worker, the webhook delivery worker and the job streams resume by
 *   themselves: every acknowledged run completes, every job.completed event is delivered to the
 *   webhook, every stream opened before the outages stays open through them (LISTEN reconnects)
 *   and ends with its job's terminal snapshot;
 * - no acknowledged run, ledger entry or event is lost and nothing is doubled: one job per key, one
 *   hold per job (released), usage entries summing to each job's cost, one terminal event per job,
 *   and the ledger invariants (test/support/ledger.ts).
 * Skips with the reason when initdb/pg_ctl are missing; with CI=true it fails instead.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Deps } from '../../src/deps.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { systemClock } from '../../src/lib/clock.js';
import { FIXTURE_CERT, HttpsReceiver } from '../support/https-receiver.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { admissionProblems, RunLoad } from '../support/fault-load.js';
import { privatePostgresSkip, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { adminPost, distMissing, DIST_MAIN, PROCESS_SECRET_KEY, seedTenantOverHttp, startServer, type HttpTenant, type ServerProcess } from '../support/processes.js';
import { frameReader, streamGet } from '../support/sse.js';
import { waitUntil } from '../support/wait.js';
import { WEBHOOK_TEST_ENV } from '../support/webhooks.js';

const skip = privatePostgresSkip() || (distMissing ? `${DIST_MAIN} is missing: run \`npm run build\` first (npm test does)` : false);

/** An answer later than this is a hang (the pool's connection timeout is 5 s). */
const DEADLINE_MS = 10_000;
/** How long each outage lasts. */
const OUTAGE_MS = 2_500;
const RUN = (i: number, delayMs = 30) => ({ operationId: 'music.generate', input: { prompt: `restart ${i} [sim:delay=${delayMs}]`, durationSeconds: 10 } });

const receiver = HttpsReceiver.forThisFile();

interface Poll {
  statuses: { at: number; status: number; code?: string; retryAfter: string | null }[];
  problems: string[];
  stop(): Promise<void>;
}

/** Calls `path` every `everyMs` until stopped, recording what each answer was. */
function poll(base: string, path: string, headers: Record<string, string>, everyMs: number, ok: (status: number) => boolean): Poll {
  const result: Poll = { statuses: [], problems: [], stop: async () => {} };
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      try {
        const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(DEADLINE_MS) });
        const body = (await res.json()) as { code?: string };
        const retryAfter = res.headers.get('retry-after');
        result.statuses.push({ at: Date.now(), status: res.status, code: body.code, retryAfter });
        const documented503 = res.status === 503 && body.code === 'UNAVAILABLE' && retryAfter !== null && Number(retryAfter) >= 1;
        if (!ok(res.status) && !documented503) result.problems.push(`GET ${path}: ${res.status} ${JSON.stringify(body)}`);
      } catch (err) {
        result.problems.push(`GET ${path}: ${(err as Error).name} ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  result.stop = async () => {
    stopping = true;
    await loop;
  };
  return result;
}

interface Followed {
  jobId: string;
  /** The job's statuses in the order the stream sent them (across reconnections). */
  statuses: string[];
  ids: number[];
  reconnects: number;
  /** Why each reconnection was needed. */
  why: string[];
  done: Promise<void>;
}

/**
 * Follows a job's stream until its terminal snapshot, as a client following the contract does: a
 * stream that ends early is opened again with Last-Event-ID (counted in `reconnects`).
 */
function follow(base: string, t: HttpTenant, jobId: string): Followed {
  const f: Followed = { jobId, statuses: [], ids: [], reconnects: 0, why: [], done: Promise.resolve() };
  f.done = (async () => {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const headers: Record<string, string> = { ...t.headers, accept: 'text/event-stream' };
      if (f.ids.length) headers['last-event-id'] = String(f.ids.at(-1));
      let res: Response;
      try {
        res = await streamGet(`${base}/v1/jobs/${jobId}/stream`, headers).response;
      } catch (err) {
        f.why.push((err as Error).message);
        f.reconnects++;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (res.status !== 200) {
        f.why.push(`${res.status} ${await res.text()}`);
        f.reconnects++;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const frames = frameReader(res);
      for (;;) {
        const frame = await frames.next(30_000).catch(() => undefined);
        if (!frame) break;
        if (frame.event !== 'job' || !frame.data) continue;
        const snapshot = JSON.parse(frame.data) as { status: string };
        f.ids.push(Number(frame.id));
        f.statuses.push(snapshot.status);
        if (snapshot.status === 'completed' || snapshot.status === 'failed' || snapshot.status === 'cancelled') {
          await res.body?.cancel().catch(() => {});
          return;
        }
      }
      f.why.push(`ended after ${JSON.stringify(f.statuses)}`);
      f.reconnects++;
    }
    throw new Error(`stream of job ${jobId} did not end with a terminal snapshot; statuses ${JSON.stringify(f.statuses)}`);
  })();
  return f;
}

/** The distinct reasons a stream needed reconnecting (for a failure message). */
const reasonsOf = (f: Followed) => JSON.stringify([...new Set(f.why)].slice(0, 5));

describe('PostgreSQL restarts under load [private cluster]', { skip }, () => {
  let cluster: PrivatePostgres;
  let dataDir: string;
  let handle: DatabaseHandle | undefined;
  const processes: ServerProcess[] = [];

  before(async () => {
    cluster = await startPrivatePostgres();
    dataDir = mkdtempSync(join(tmpdir(), 'was-pg-restart-'));
  });

  after(async () => {
    for (const p of processes) await p.crash();
    await handle?.close();
    await cluster?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('a fast and an immediate restart lose nothing, answer 503 UNAVAILABLE meanwhile, and everything resumes', async (ctx) => {
    const env = {
      DATABASE_URL: cluster.url,
      DATA_DIR: dataDir,
      SECRET_KEY: PROCESS_SECRET_KEY,
      // Short leases: jobs whose attempt the outage cut short are recovered within seconds.
      JOB_LEASE_MS: '3000',
      ...WEBHOOK_TEST_ENV,
      // The webhook receiver's `*.localhost` name and its test-only certificate, in the server processes.
      NODE_OPTIONS: `--import=${pathToFileURL(resolve('test/support/localhost-names-preload.mjs')).href}`,
      NODE_EXTRA_CA_CERTS: FIXTURE_CERT,
    };
    const api = await startServer({ ...env, ROLE: 'api' });
    processes.push(api);
    const worker = await startServer({ ...env, ROLE: 'worker' });
    processes.push(worker);
    handle = await openDatabase(cluster.url, { poolMax: 4 });

    // A test key (simulated work); database reads go to its test twin (t.scope).
    const t = await seedTenantOverHttp(api.base, 1_000_000_000, { pointsPerMinute: 10_000_000, pointsPerMonth: 100_000_000, waitingJobs: 100_000, runningJobs: 64, streams: 10 }, { mode: 'test' });
    await adminPost(api.base, `/admin/v1/workspaces/${t.workspaceId}/domains`, { hostname: 'hooks.localhost' });
    await adminPost(api.base, `/admin/v1/workspaces/${t.workspaceId}/domains/hooks.localhost/verify`, { method: 'operator' });
    const hook = await fetch(`${api.base}/v1/webhooks`, {
      method: 'POST',
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('hooks.localhost'), eventTypes: ['job.completed', 'job.failed'] }),
    });
    assert.equal(hook.status, 200, await hook.clone().text());

    const load = new RunLoad({ bases: () => [api.base], headers: t.headers, body: (i) => RUN(i), deadlineMs: DEADLINE_MS, connectionErrorsExpected: false });
    load.start(4);
    // Jobs that run through the outages, each followed by a stream opened before them.
    const slow = new RunLoad({ bases: () => [api.base], headers: t.headers, body: (i) => RUN(i, 6_000), deadlineMs: DEADLINE_MS, connectionErrorsExpected: false });
    const slowIds = await Promise.all(Array.from({ length: 6 }, (_, i) => slow.runUntilAcknowledged(i)));
    const streams = slowIds.map((id) => follow(api.base, t, id));
    await waitUntil(() => load.acked.size, (n) => n >= 20, 'runs acknowledged before the first outage', 30_000);
    const someJob = [...load.acked.values()][0]!;
    const reads = [
      poll(api.base, `/v1/jobs/${someJob}`, t.headers, 50, (s) => s === 200),
      poll(api.base, '/v1/balance', t.headers, 50, (s) => s === 200),
    ];
    const ready = poll(api.base, '/readyz', {}, 100, (s) => s === 200);

    const outages: { from: number; to: number }[] = [];
    for (const mode of ['fast', 'immediate'] as const) {
      await new Promise((r) => setTimeout(r, 1_000));
      await cluster.stop(mode);
      const from = Date.now();
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      const to = Date.now();
      await cluster.start();
      outages.push({ from, to });
      const ackedAtRestart = load.acked.size;
      await waitUntil(() => load.acked.size, (n) => n >= ackedAtRestart + 20, `runs acknowledged again after the ${mode} restart`, 30_000);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    await load.stop();
    for (const p of [...reads, ready]) await p.stop();

    // Answers: documented ones only, none late.
    assert.deepEqual([...load.problems, ...slow.problems, ...reads.flatMap((r) => r.problems), ...ready.problems], []);
    assert.equal(load.connectionErrors, 0, 'the API process never refused or cut a connection');
    assert.ok(load.count(503) > 0, 'runs sent during the outages were answered 503');
    const inOutage = (at: number) => outages.some((o) => at >= o.from && at <= o.to);
    const readyDuring = ready.statuses.filter((s) => inOutage(s.at));
    assert.ok(readyDuring.length > 0 && readyDuring.every((s) => s.status === 503), `/readyz during the outages: ${JSON.stringify(readyDuring)}`);
    assert.equal(ready.statuses.at(-1)?.status, 200, '/readyz ready again');

    // Resumption: every acknowledged run completes, every stream ends with its terminal snapshot.
    const acked = new Map([...load.acked, ...slow.acked]);
    const allIds = [...acked.values()];
    await waitUntil(
      async () => (await handle!.db.selectFrom('jobs').select('status').where('workspace_id', '=', t.scope).where('status', '!=', 'completed').execute()).length,
      (n) => n === 0,
      'every acknowledged run to complete',
      60_000,
      250,
    );
    await Promise.all(streams.map((s) => s.done));
    for (const s of streams) {
      assert.equal(s.statuses.at(-1), 'completed', `stream of ${s.jobId}: ${JSON.stringify(s.statuses)}`);
      assert.equal(s.reconnects, 0, `the stream of ${s.jobId}, open before the outages, stayed open through them: ${reasonsOf(s)}`);
      assert.deepEqual(s.ids, [...s.ids].sort((a, b) => a - b), `stream ids of ${s.jobId} only grow`);
      assert.equal(new Set(s.ids).size, s.ids.length, `stream of ${s.jobId} sends each version once`);
    }

    // Nothing lost, nothing doubled.
    assert.deepEqual(await admissionProblems(handle.db, t.scope, acked), []);
    const events = await handle.db.selectFrom('events').select(['id', 'type', 'data_json']).where('workspace_id', '=', t.scope).where('type', '=', 'job.completed').execute();
    const eventJobs = events.map((e) => String((JSON.parse(e.data_json) as { job: { id: string } }).job.id));
    assert.equal(eventJobs.length, allIds.length, 'one job.completed event per job');
    assert.deepEqual(new Set(eventJobs), new Set(allIds));
    await waitUntil(
      async () => (await handle!.db.selectFrom('webhook_deliveries').select(['status']).where('workspace_id', '=', t.scope).execute()).filter((d) => d.status !== 'succeeded').length,
      (n) => n === 0,
      'every webhook delivery to succeed',
      60_000,
      250,
    );
    const deliveries = await handle.db.selectFrom('webhook_deliveries').select(['event_id']).where('workspace_id', '=', t.scope).execute();
    assert.deepEqual(new Set(deliveries.map((d) => d.event_id)), new Set(events.map((e) => e.id)), 'a delivery per event');
    const received = new Set(receiver.requests.map((r) => String(r.headers['service-event-id'])));
    for (const e of events) assert.ok(received.has(e.id), `event ${e.id} reached the webhook receiver`);
    await assertLedgerInvariants({ db: handle.db, clock: systemClock } as unknown as Deps, t.scope);

    const logged = (p: ServerProcess, msg: string) => p.lines.filter((l) => l.msg === msg).length;
    ctx.diagnostic(
      `runs acknowledged ${acked.size}, 503 answers ${load.count(503)}, stream reconnections ${streams.map((s) => s.reconnects).join(',')}, ` +
        `finishes retried ${logged(worker, 'database unavailable; finishing the job again')}, attempts left to recovery ${logged(worker, 'database unavailable; the job is left to lease recovery')}, ` +
        `delivery outcomes retried ${logged(worker, 'database unavailable; recording the delivery outcome again')}, webhook requests ${receiver.requests.length} for ${events.length} events`,
    );

    // Neither process died, and each logged the outage as what it was.
    for (const p of processes) {
      assert.equal(p.child.exitCode, null, 'the process is still running');
      assert.deepEqual(p.lines.filter((l) => Number(l.level) >= 60), [], 'no fatal log line');
      assert.deepEqual(p.lines.filter((l) => l.msg === 'unhandled error'), [], 'no request answered 500');
    }
    for (const p of processes) assert.equal(await p.stop(), 0, 'graceful exit');
  });
});
