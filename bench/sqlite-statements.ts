/**
 * `node --import tsx bench/sqlite-statements.ts`: where the SQLite time of the two write-heavy
 * job paths goes, statement by statement, in one process (no sockets): N queued admissions
 * through `app.inject` by 32 concurrent callers (the (ja) path), then the drain of those jobs by
 * the job worker with the service's background checkpointer (the (jd) path), then the raw
 * better-sqlite3 loop that is (jd)'s baseline.
 *
 * Every call of a better-sqlite3 statement (including BEGIN, savepoints and COMMIT, where the WAL
 * frames are written) is timed (bench/sqlite-tally.ts). The SQLite time is spent on the one
 * event-loop thread, so it is a floor of each path's cost with the current schema, whatever the
 * JavaScript around it costs:
 * `jdCeiling` = raw loop µs per job / SQLite µs per drained job is the highest (jd) ratio this
 * schema allows on this machine. For (ja), compare SQLite µs per admission with five times the
 * bare route's CPU µs per request from `npm run bench` (the goal's whole budget).
 *
 * N (default 10000) sizes both phases; JOB_CONCURRENCY (default 32) the worker.
 */
import SqliteDatabase from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createTestContext, disposeTestContext } from '../test/support/harness.js';
import { seedTenant } from '../test/support/seed.js';
import { updateWorkspaceSettings } from '../src/modules/accounts/service.js';
import { startCheckpointer } from '../src/db/sqlite-checkpointer.js';
import { JobWorker } from '../src/worker/job-worker.js';
import { rawLoop } from './jobs-drain.js';
import { report, tally } from './sqlite-tally.js';
import { runBody, sleep } from './jobs-support.js';

const N = Number(process.env.N ?? 10_000);
const CONCURRENCY = Number(process.env.JOB_CONCURRENCY ?? 32);

const ctx = await createTestContext('sqlite', { env: { JOB_CONCURRENCY: String(CONCURRENCY) } });
const checkpointer = { stop: async () => {} };
try {
  // Real time: jobs and leases are stamped with it, as in the service.
  (ctx.clock as unknown as { now: () => number }).now = () => Date.now();
  const t = await seedTenant(ctx.deps, { credits: 1_000_000_000_000 });
  await updateWorkspaceSettings(ctx.deps, t.workspace.id, {
    limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000, waitingJobs: 10_000_000, runningJobs: 64 },
  });
  const headers = { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': 'application/json' };
  const admit = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next++ < n) {
          const res = await ctx.app.inject({ method: 'POST', url: '/v1/runs', headers: { ...headers, 'idempotency-key': randomUUID() }, payload: runBody() });
          if (res.statusCode !== 202) throw new Error(`POST /v1/runs: ${res.statusCode} ${res.body}`);
        }
      }),
    );
  };

  // As the service runs: WAL checkpoints on a worker thread, the writer's own threshold far above.
  const path = ctx.database.url!.slice('sqlite:'.length);
  await sql.raw('pragma wal_autocheckpoint = 16384').execute(ctx.deps.db);
  Object.assign(checkpointer, startCheckpointer({ pragma: () => undefined } as unknown as SqliteDatabase.Database, path));

  await admit(2000); // warm-up (JIT, statement cache); drained with the rest
  tally.recording = true;
  let cpu0 = process.cpuUsage();
  await admit(N);
  const admission = report(`(ja) path: ${N} queued admissions`, N, process.cpuUsage(cpu0));
  tally.recording = false;

  const reader = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
  const open = reader.prepare("select count(*) as n from jobs where status in ('pending', 'processing')");
  const worker = new JobWorker(ctx.deps, { concurrency: CONCURRENCY, pollMs: 5 });
  const jobs = N + 2000;
  tally.recording = true;
  cpu0 = process.cpuUsage();
  worker.start();
  const openJobs = () => {
    tally.recording = false; // the poll is not the drain's
    const { n } = open.get() as { n: number };
    tally.recording = true;
    return n;
  };
  while (openJobs() > 0) await sleep(20);
  const cpu = process.cpuUsage(cpu0);
  tally.recording = false;
  await worker.stop();
  reader.close();
  const drain = report(`(jd) path: drain of ${jobs} jobs`, jobs, cpu);

  const rawPerS = rawLoop(jobs);
  const rawUs = 1e6 / rawPerS;
  process.stdout.write(
    `\nraw loop (jd baseline): ${rawUs.toFixed(1)} µs per job; SQLite alone: ${drain.toFixed(1)} µs per drained job, ` +
      `${admission.toFixed(1)} µs per admission\n`,
  );
  process.stdout.write(`${JSON.stringify({ admissionSqliteUs: +admission.toFixed(1), drainSqliteUs: +drain.toFixed(1), rawUsPerJob: +rawUs.toFixed(1), jdCeiling: +(rawUs / drain).toFixed(2) })}\n`);
} finally {
  await checkpointer.stop();
  await disposeTestContext(ctx);
}
