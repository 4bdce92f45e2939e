/**
 * PostgreSQL parts of the job benches: a fresh database per measurement on the given server,
 * and (jc) jobs completed per second end to end. The service (ROLE=all: API and worker in one
 * process) is fed by 8 HTTP clients admitting image.generate one at a time ([sim:delay=0]) for
 * a fixed time; graphile-worker is fed by 8 producers calling addJob one at a time, its worker
 * in its own process running a no-op task. Each rate is the jobs added over the time from the
 * first add until the queue is empty again (polled every 20 ms), so a slow worker pays its tail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { Agent, request } from 'undici';
import { makeWorkerUtils } from 'graphile-worker';
import { spawnChild } from './processes.js';
import { ROOT, runBody, seedJobTenant, sleep, startService } from './jobs-support.js';

const PRODUCERS = 8;

export async function withFreshDatabase<T>(serverUrl: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `was_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    try {
      return await fn(url.toString());
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

async function untilEmpty(pool: pg.Pool, sql: string, timeoutMs = 10 * 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(sql);
    if (Number(rows[0].n) === 0) return performance.now();
    if (Date.now() > deadline) throw new Error(`still ${rows[0].n} open: ${sql}`);
    await sleep(20);
  }
}

/** Runs `produce` in PRODUCERS loops for `seconds`; returns how many it added and when it started. */
async function produce(seconds: number, add: () => Promise<void>): Promise<{ added: number; t0: number }> {
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let added = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (performance.now() < end) {
        await add();
        added++;
      }
    }),
  );
  return { added, t0 };
}

async function serviceRate(serverUrl: string, seconds: number) {
  return withFreshDatabase(serverUrl, async (url) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-e2e-'));
    const svc = await startService('serve', { DATABASE_URL: url, ROLE: 'all', DATA_DIR: dataDir });
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // undici's request, not fetch: fetch spends several times the CPU per request here (about
    // 300 µs against 40 µs on the 2-CPU VM), which this bench would measure instead of the service.
    const dispatcher = new Agent({ connections: PRODUCERS });
    try {
      const t = await seedJobTenant(svc.base, 'bench-e2e', 64);
      const headers = { ...t.headers, 'content-type': 'application/json' };
      const body = runBody();
      const add = async () => {
        const res = await request(`${svc.base}/v1/runs`, { method: 'POST', dispatcher, headers: { ...headers, 'idempotency-key': randomUUID() }, body });
        if (res.statusCode !== 202) throw new Error(`POST /v1/runs: ${res.statusCode} ${await res.body.text()}`);
        await res.body.arrayBuffer();
      };
      await produce(0.5, add); // warm-up
      await untilEmpty(pool, "select count(*) as n from jobs where status in ('pending', 'processing')");
      const before = await pool.query("select count(*) as n from jobs where status = 'completed'");
      const { added, t0 } = await produce(seconds, add);
      const t1 = await untilEmpty(pool, "select count(*) as n from jobs where status in ('pending', 'processing')");
      const { rows } = await pool.query("select count(*) filter (where status = 'completed') as ok, (select count(*) from events where type = 'job.completed') as events from jobs");
      const completed = Number(rows[0].ok) - Number(before.rows[0].n);
      if (completed !== added || Number(rows[0].events) !== Number(rows[0].ok)) throw new Error(`e2e: ${completed} completed, ${rows[0].events} events of ${added}`);
      return { jobs: added, perS: (added * 1000) / (t1 - t0) };
    } finally {
      await dispatcher.close();
      await pool.end();
      await svc.child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}

async function graphileRate(serverUrl: string, seconds: number) {
  return withFreshDatabase(serverUrl, async (url) => {
    // Our own pool for the producers, closed by us before the database is dropped.
    const producerPool = new pg.Pool({ connectionString: url, max: 10 });
    producerPool.on('error', () => {});
    const utils = await makeWorkerUtils({ pgPool: producerPool });
    await utils.migrate();
    const worker = spawnChild(ROOT, ['--import', 'tsx', join(ROOT, 'bench/graphile-worker.ts')], { DATABASE_URL: url });
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const open = 'select count(*) as n from graphile_worker.jobs';
      const add = async () => {
        await utils.addJob('noop', {});
      };
      await add();
      await untilEmpty(pool, open, 60_000); // the worker is up
      await produce(0.5, add); // warm-up
      await untilEmpty(pool, open);
      const { added, t0 } = await produce(seconds, add);
      const t1 = await untilEmpty(pool, open);
      return { jobs: added, perS: (added * 1000) / (t1 - t0) };
    } finally {
      await pool.end();
      await worker.stop();
      await utils.release();
      await producerPool.end();
    }
  });
}

export async function measureEndToEnd(serverUrl: string, seconds: number) {
  const ours = await serviceRate(serverUrl, seconds);
  const theirs = await graphileRate(serverUrl, seconds);
  return {
    ratio: ours.perS / theirs.perS,
    detail: { jobsPerS: Math.round(ours.perS), jobs: ours.jobs, graphilePerS: Math.round(theirs.perS), graphileJobs: theirs.jobs, seconds },
  };
}
