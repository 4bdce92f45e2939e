/**
 * (jd) Drain rate on SQLite: N jobs are admitted over HTTP by an API-only process, which then
 * stops; a worker process (`main.js worker`) on the same data directory claims, executes
 * (simulated provider, zero delay), settles and records the event of every job. The rate is N
 * over the span from the first claim to the last completion, read from the jobs' own
 * timestamps. Baseline: a raw better-sqlite3 loop over a plain table in this process, one
 * transaction to claim the oldest pending row and one to complete it, per job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import { runBody, seedJobTenant, sleep, startService } from './jobs-support.js';

export function rawLoop(n: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'was-bench-raw-'));
  const db = new SqliteDatabase(join(dir, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('create table jobs (id integer primary key, status text not null, payload text not null, result text, locked_by text, updated_at integer)');
    db.exec('create index jobs_pending on jobs (status, id)');
    const insert = db.prepare("insert into jobs (status, payload) values ('pending', ?)");
    db.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(runBody());
    })();
    const claim = db.prepare(
      "update jobs set status = 'running', locked_by = 'raw', updated_at = ? where id = (select id from jobs where status = 'pending' order by id limit 1) returning id, payload",
    );
    const complete = db.prepare("update jobs set status = 'done', result = ?, updated_at = ? where id = ? and status = 'running'");
    const t0 = performance.now();
    for (;;) {
      const job = db.transaction(() => claim.get(Date.now()) as { id: number; payload: string } | undefined)();
      if (!job) break;
      const result = JSON.stringify({ ok: true, input: JSON.parse(job.payload) });
      db.transaction(() => complete.run(result, Date.now(), job.id))();
    }
    const ms = performance.now() - t0;
    const done = (db.prepare("select count(*) as n from jobs where status = 'done'").get() as { n: number }).n;
    if (done !== n) throw new Error(`raw loop completed ${done} of ${n}`);
    return (n * 1000) / ms;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureDrain(n: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-drain-'));
  try {
    const api = await startService('serve', { DATA_DIR: dataDir, ROLE: 'api' });
    try {
      const t = await seedJobTenant(api.base, 'bench-drain', 64);
      const result = await autocannon({
        url: `${api.base}/v1/runs`,
        connections: 32,
        amount: n,
        method: 'POST',
        headers: { ...t.headers, 'content-type': 'application/json' },
        body: runBody(),
        requests: [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }) }],
      } as any);
      const admitted = (result.statusCodeStats as Record<string, { count: number }>)['202']?.count ?? 0;
      if (admitted !== n) throw new Error(`admitted ${admitted} of ${n}: ${JSON.stringify(result.statusCodeStats)}`);
    } finally {
      await api.child.stop();
    }
    const worker = await startService('worker', { DATA_DIR: dataDir, ROLE: 'worker' });
    const db = new SqliteDatabase(join(dataDir, 'service.db'), { readonly: true, fileMustExist: true });
    try {
      const deadline = Date.now() + 30 * 60_000;
      for (;;) {
        const open = (db.prepare("select count(*) as n from jobs where status in ('pending', 'processing')").get() as { n: number }).n;
        if (open === 0) break;
        if (Date.now() > deadline) throw new Error(`drain: ${open} jobs still open`);
        await sleep(100);
      }
      const span = db.prepare("select min(started_at_ms) as s, max(completed_at_ms) as e, count(*) as n, sum(status = 'completed') as ok from jobs").get() as { s: number; e: number; n: number; ok: number };
      const events = (db.prepare("select count(*) as n from events where type = 'job.completed'").get() as { n: number }).n;
      const holds = (db.prepare('select count(*) as n from credit_holds where released_at_ms is null').get() as { n: number }).n;
      if (span.ok !== n || events !== n || holds !== 0) throw new Error(`drain: ${span.ok} completed, ${events} events, ${holds} open holds of ${n}`);
      const rate = (n * 1000) / Math.max(1, span.e - span.s);
      const raw = rawLoop(n);
      return { ratio: rate / raw, detail: { jobs: n, jobsPerS: Math.round(rate), rawPerS: Math.round(raw), drainS: +((span.e - span.s) / 1000).toFixed(2) } };
    } finally {
      db.close();
      await worker.child.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
