/** Complete output near the 16 MiB bound: paging verifies, and a larger result fails cleanly. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { admin, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { scopeOf, seedTenant } from '../support/seed.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { drain, getJob, readCompleteOutput, run } from '../support/jobs.js';

describeEachDatabase('complete output near 16 MiB', (get) => {
  test('a result of almost 16 MiB of multi-byte text pages in ≤8192-byte fragments and verifies by SHA-256', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 10_000_000 } });
    const bytes = 16 * 1024 * 1024 - 300 * 1024;
    const jobId = (await run(ctx, t, 'music.generate', { prompt: `big [sim:outputBytes=${bytes}]` })).json().data.jobId;
    await drain(ctx);
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'completed', job.errorCode);
    const out = await readCompleteOutput(ctx, t, jobId);
    assert.ok(out.total > bytes && out.total <= 16 * 1024 * 1024);
    assert.equal(createHash('sha256').update(out.bytes).digest('hex'), out.digest);
    assert.ok(out.pages >= Math.ceil(out.total / 8192));
    const doc = JSON.parse(out.bytes.toString('utf8'));
    assert.equal(Buffer.byteLength(doc.text), bytes);
  });

  test('a result over the 16 MiB bound fails with OUTPUT_TOO_LARGE and releases the hold', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const jobId = (await run(ctx, t, 'music.generate', { prompt: `huge [sim:outputBytes=${17 * 1024 * 1024}]` })).json().data.jobId;
    await drain(ctx);
    const job = await getJob(ctx, t, jobId);
    assert.equal(job.status, 'failed');
    assert.equal(job.errorCode, 'OUTPUT_TOO_LARGE');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());
