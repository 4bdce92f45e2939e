/**
 * Reads of the job-change followers (modules/jobs/change-reads.ts), the standing MCP stream's
 * safety poll among them: the active jobs of every workspace a process's streams cover, however
 * many, in statements within the databases' bounds on parameters.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { activeJobHeads, WORKSPACES_PER_READ } from '../../src/modules/jobs/change-reads.js';
import { describeEachDatabase } from '../support/harness.js';
import { run } from '../support/jobs.js';
import { seedTenant } from '../support/seed.js';

describeEachDatabase('job change reads', (get) => {
  test('activeJobHeads over 70,000 workspaces (past SQLite’s 32,766 and PostgreSQL’s 65,535 parameters) finds the active jobs of each, wherever it stands in the list', async () => {
    const ctx = get();
    const tenants = [await seedTenant(ctx.deps, { credits: 100_000 }), await seedTenant(ctx.deps, { credits: 100_000 }), await seedTenant(ctx.deps, { credits: 100_000 })];
    const jobs = new Map<string, string>();
    for (const t of tenants) {
      const res = await run(ctx, t, 'music.generate', { prompt: 'a tune', durationSeconds: 5 });
      assert.equal(res.statusCode, 202, res.body);
      jobs.set(res.json().data.jobId, t.workspace.id);
    }
    const ids: string[] = Array.from({ length: 70_000 }, () => randomUUID());
    // First, across a chunk boundary and last.
    ids[0] = tenants[0]!.workspace.id;
    ids[WORKSPACES_PER_READ] = tenants[1]!.workspace.id;
    ids[ids.length - 1] = tenants[2]!.workspace.id;
    const heads = await activeJobHeads(ctx.deps.db, ids);
    assert.deepEqual(
      heads.map((h) => [h.id, h.workspaceId, h.status, h.version]).sort(),
      [...jobs].map(([id, ws]) => [id, ws, 'pending', 1]).sort(),
    );
    assert.deepEqual(await activeJobHeads(ctx.deps.db, []), []);
  });
});
