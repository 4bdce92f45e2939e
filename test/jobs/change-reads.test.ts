/**
 * Reads of the job-change followers (modules/jobs/change-reads.ts), the standing MCP stream's
 * safety poll among them: the active jobs of every workspace a process's streams cover, however
 * many, in statements within the databases' bounds on parameters.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { activeJobHeads, WORKSPACES_PER_READ } from '../../src/modules/jobs/change-reads.js';
import { describeEachDatabase, testKeySuite } from '../support/harness.js';
import { run } from '../support/jobs.js';
import { scopeOf, seedTenant } from '../support/seed.js';

describeEachDatabase('job change reads', (get) => {
  test('activeJobHeads over 70,000 workspaces (past SQLite’s 32,766 and PostgreSQL’s 65,535 parameters) finds the active jobs of each, wherever it stands in the list', async () => {
    const ctx = get();
    const tenants = [await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' }), await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' }), await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' })];
    const jobs = new Map<string, string>();
    for (const t of tenants) {
      const res = await run(ctx, t, 'music.generate', { prompt: 'a tune', durationSeconds: 5 });
      assert.equal(res.statusCode, 202, res.body);
      jobs.set(res.json().data.jobId, scopeOf(t));
    }
    const ids: string[] = Array.from({ length: 70_000 }, () => randomUUID());
    // First, across a chunk boundary and last.
    ids[0] = scopeOf(tenants[0]!);
    ids[WORKSPACES_PER_READ] = scopeOf(tenants[1]!);
    ids[ids.length - 1] = scopeOf(tenants[2]!);
    const heads = await activeJobHeads(ctx.deps.db, ids);
    assert.deepEqual(
      heads.map((h) => [h.id, h.workspaceId, h.status, h.version]).sort(),
      [...jobs].map(([id, ws]) => [id, ws, 'pending', 1]).sort(),
    );
    assert.deepEqual(await activeJobHeads(ctx.deps.db, []), []);
  });
}, testKeySuite());
