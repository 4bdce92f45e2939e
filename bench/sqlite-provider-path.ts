/**
 * `node --import tsx bench/sqlite-provider-path.ts`: where the SQLite time of the (p) path goes —
 * synchronous chat.generate runs on an OpenAI-compatible provider (the fake of
 * test/support/fake-openai.ts) through `app.inject`, PARALLEL (8) at a time as the (p) bench's
 * clients — statement by statement (bench/sqlite-tally.ts), and which b-trees the commits write:
 * the WAL's frames counted per table and index (SQLite writes each frame with two `pwrite`
 * calls, so a commit's cost grows with them). The WAL is not checkpointed while it counts.
 *
 * N (default 3000) runs are measured after 200 of warm-up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createTestContext, disposeTestContext } from '../test/support/harness.js';
import { seedTenant } from '../test/support/seed.js';
import { FakeOpenAi } from '../test/support/fake-openai.js';
import { updateWorkspaceSettings } from '../src/modules/accounts/service.js';
import { report, tally, walFrames } from './sqlite-tally.js';

const N = Number(process.env.N ?? 3000);
const PARALLEL = Number(process.env.PARALLEL ?? 8);

const fake = await FakeOpenAi.start();
const dir = mkdtempSync(join(tmpdir(), 'was-bench-sqlite-p-'));
const file = join(dir, 'providers.json');
writeFileSync(
  file,
  JSON.stringify({
    providers: { fake: { type: 'openai', baseUrl: fake.baseUrl, apiKeyEnv: 'BENCH_OPENAI_KEY', privateNetwork: true } },
    operations: { 'chat.generate': { provider: 'fake', model: 'bench-model', price: { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 } } },
  }),
);
const ctx = await createTestContext('sqlite', { env: { PROVIDERS_FILE: file, BENCH_OPENAI_KEY: 'sk-bench' } });
try {
  // Real time: jobs and leases are stamped with it, as in the service.
  (ctx.clock as unknown as { now: () => number }).now = () => Date.now();
  const t = await seedTenant(ctx.deps, { credits: 1_000_000_000_000 });
  await updateWorkspaceSettings(ctx.deps, t.workspace.id, { limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000 } });
  const headers = { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': 'application/json' };
  const payload = { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'Say hello' }], maxTokens: 16 } };
  const runs = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next++ < n) {
          const res = await ctx.app.inject({ method: 'POST', url: '/v1/runs', headers: { ...headers, 'idempotency-key': randomUUID() }, payload });
          if (res.statusCode !== 200) throw new Error(`POST /v1/runs: ${res.statusCode} ${res.body}`);
        }
      }),
    );
  };
  const path = ctx.database.url!.slice('sqlite:'.length);
  await runs(200); // warm-up (JIT, statement cache)
  // The WAL from here on holds only the measured runs' frames.
  await sql.raw('pragma wal_autocheckpoint = 0').execute(ctx.deps.db);
  await sql.raw('pragma wal_checkpoint(truncate)').execute(ctx.deps.db);
  tally.recording = true;
  const cpu0 = process.cpuUsage();
  await runs(N);
  const sqliteUs = report(`(p) path: ${N} synchronous chat.generate runs, ${PARALLEL} at a time`, N, process.cpuUsage(cpu0));
  tally.recording = false;
  const wal = walFrames(path);
  process.stdout.write(`\nWAL: ${wal.commits} commits, ${(wal.commits / N).toFixed(2)} a run; ${wal.frames} frames, ${(wal.frames / N).toFixed(1)} a run, ${(wal.frames / Math.max(1, wal.commits)).toFixed(1)} a commit\n`);
  for (const [tree, n] of [...wal.byTree].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${(n / Math.max(1, wal.commits)).toFixed(2).padStart(6)} a commit  ${tree}\n`);
  process.stdout.write(`${JSON.stringify({ sqliteUsPerRun: +sqliteUs.toFixed(1), commitsPerRun: +(wal.commits / N).toFixed(3), framesPerRun: +(wal.frames / N).toFixed(2) })}\n`);
} finally {
  await disposeTestContext(ctx);
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}
