/**
 * Field sets of the spec's tables, copied by hand (issue 39 item 5): the queue record
 * (decisions.md "Gaps resolved": `{workspaceId, running, waiting, runningLimit, waitingLimit,
 * items}`, items `{jobId, toolSlug, operationId, status, position, createdAt}`), Usage (data) and
 * the job output fragment (public-api-v1.md, "Resources and their fields"). Each response has
 * exactly these fields, of the types the tables give, rather than whatever the service's own
 * schemas say, so a field renamed, dropped or added in src/ fails here against the contract.
 * The tenants use test keys (simulated work, the test balance).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertOk } from '../support/assertions.js';
import { drain, run } from '../support/jobs.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { claimJobs } from '../../src/worker/job-claim.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type FieldType = 'uuid' | 'string' | 'integer' | 'boolean' | 'timestamp' | 'object' | 'array' | 'hex64' | 'string|null';

/** Exactly `fields`, each of its type. */
function assertFields(value: unknown, fields: Record<string, FieldType>, what: string): asserts value is Record<string, any> {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${what}: an object`);
  assert.deepEqual(Object.keys(value).sort(), Object.keys(fields).sort(), `${what}: the fields of the spec's table`);
  for (const [name, type] of Object.entries(fields)) {
    const v = (value as Record<string, unknown>)[name];
    const ok = {
      uuid: () => typeof v === 'string' && UUID.test(v),
      string: () => typeof v === 'string',
      integer: () => Number.isInteger(v),
      boolean: () => typeof v === 'boolean',
      timestamp: () => typeof v === 'string' && TIMESTAMP.test(v),
      object: () => v !== null && typeof v === 'object' && !Array.isArray(v),
      array: () => Array.isArray(v),
      hex64: () => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v),
      'string|null': () => v === null || typeof v === 'string',
    }[type]();
    assert.ok(ok, `${what}: ${name} is ${type} (${JSON.stringify(v)})`);
  }
}

// decisions.md, "Gaps resolved", GET /v1/queue.
// `livemode` on both: docs/decisions.md, "Test mode" (issue 34).
const QUEUE: Record<string, FieldType> = { workspaceId: 'uuid', livemode: 'boolean', running: 'integer', waiting: 'integer', runningLimit: 'integer', waitingLimit: 'integer', items: 'array' };
const QUEUE_ITEM: Record<string, FieldType> = { jobId: 'uuid', toolSlug: 'string', operationId: 'string', status: 'string', position: 'integer', createdAt: 'timestamp' };
// public-api-v1.md, "Usage (data)".
const USAGE: Record<string, FieldType> = { workspaceId: 'uuid', livemode: 'boolean', plan: 'string', points: 'object', budgets: 'array', streams: 'object' };
const USAGE_POINTS: Record<string, FieldType> = {
  minuteLimit: 'integer',
  minuteUsed: 'integer',
  minuteResetsAt: 'timestamp',
  monthlyLimit: 'integer',
  monthlyUsed: 'integer',
  monthlyResetsAt: 'timestamp',
};
const USAGE_BUDGET: Record<string, FieldType> = { scope: 'string', period: 'string', limitMillicents: 'integer', spentMillicents: 'integer', reservedMillicents: 'integer', resetsAt: 'timestamp' };
const USAGE_STREAMS: Record<string, FieldType> = { enabled: 'boolean', maximum: 'integer' };
// public-api-v1.md, "Job output fragment (data of the complete-output endpoint)".
const FRAGMENT: Record<string, FieldType> = {
  jobId: 'uuid',
  encoding: 'string',
  fragment: 'string',
  offsetBytes: 'integer',
  totalBytes: 'integer',
  sha256: 'hex64',
  snapshotExpiresAt: 'timestamp',
  nextCursor: 'string|null',
};

const MUSIC = (word: string) => ({ prompt: `${word} [sim:delay=0]`, durationSeconds: 5 });

async function get(ctx: TestContext, t: Tenant, url: string, query?: Record<string, string>): Promise<any> {
  return assertOk(await call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id, ...(query ? { query } : {}) })).data;
}

async function queued(ctx: TestContext, t: Tenant, word: string): Promise<string> {
  const res = await run(ctx, t, 'music.generate', MUSIC(word));
  assert.equal(res.statusCode, 202, res.body);
  return res.json().data.jobId as string;
}

describeEachDatabase('field sets of the spec tables', (getCtx) => {
  test('GET /v1/queue: the record and each item have exactly the fields decisions.md names; position 0 for processing, 1.. for waiting, oldest first', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const empty = await get(ctx, t, '/v1/queue');
    assertFields(empty, QUEUE, 'an empty queue');
    assert.deepEqual(empty.items, []);
    const ids = [await queued(ctx, t, 'one'), await queued(ctx, t, 'two'), await queued(ctx, t, 'three')];
    // The oldest is claimed (processing); the other two wait.
    const [claimed] = await claimJobs(ctx.deps, 'fields-worker', 1);
    assert.ok(claimed && ids.includes(claimed.id));
    const q = await get(ctx, t, '/v1/queue');
    assertFields(q, QUEUE, 'the queue');
    assert.deepEqual([q.workspaceId, q.running, q.waiting], [t.workspace.id, 1, 2]);
    assert.equal(q.items.length, 3);
    for (const item of q.items) assertFields(item, QUEUE_ITEM, 'a queue item');
    assert.deepEqual(
      q.items.map((i: any) => [i.jobId, i.status, i.position, i.operationId, i.toolSlug]),
      [
        [claimed.id, 'processing', 0, 'music.generate', 'music'],
        ...ids.filter((id) => id !== claimed.id).map((id, n) => [id, 'pending', n + 1, 'music.generate', 'music']),
      ],
    );
  });

  test('GET /v1/usage: exactly the fields of "Usage (data)", points, budgets of the key and of the workspace, streams', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test', key: { budgets: { dailyMillicents: 100_000 } } });
    assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets: { monthlyMillicents: 500_000 } })).statusCode, 200);
    await queued(ctx, t, 'budgeted');
    const usage = await get(ctx, t, '/v1/usage');
    assertFields(usage, USAGE, 'usage');
    assert.equal(usage.workspaceId, t.workspace.id);
    assertFields(usage.points, USAGE_POINTS, 'usage.points');
    assertFields(usage.streams, USAGE_STREAMS, 'usage.streams');
    assert.equal(usage.budgets.length, 2);
    for (const b of usage.budgets) assertFields(b, USAGE_BUDGET, 'a usage budget');
    assert.deepEqual(
      usage.budgets.map((b: any) => [b.scope, b.period, b.limitMillicents]),
      [
        ['key', 'day', 100_000],
        ['workspace', 'month', 500_000],
      ],
    );
  });

  test('GET /v1/jobs/{jobId}/output: every fragment has exactly the fields of the "Job output fragment" table, at most 8192 bytes, nextCursor null on the last', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    const jobId = await queued(ctx, t, 'long');
    await drain(ctx);
    // A stored result of several pages (multi-byte characters too).
    const json = JSON.stringify({ text: 'Déjà vu € 😀 '.repeat(2000) });
    await ctx.deps.db.updateTable('jobs').set({ output_json: json, output_sha256: createHash('sha256').update(json).digest('hex') }).where('id', '=', jobId).execute();
    let cursor: string | undefined;
    let pages = 0;
    let offset = 0;
    do {
      const page = await get(ctx, t, `/v1/jobs/${jobId}/output`, cursor ? { cursor } : undefined);
      assertFields(page, FRAGMENT, `output page ${pages + 1}`);
      assert.equal(page.jobId, jobId);
      assert.equal(page.encoding, 'json');
      assert.equal(page.offsetBytes, offset);
      const bytes = Buffer.byteLength(page.fragment, 'utf8');
      assert.ok(bytes <= 8192, `a fragment is at most 8192 UTF-8 bytes (${bytes})`);
      offset += bytes;
      cursor = page.nextCursor ?? undefined;
      pages++;
      if (!cursor) assert.equal(offset, page.totalBytes, 'the last fragment ends the document');
    } while (cursor);
    assert.ok(pages > 1, `several pages (${pages})`);
  });
}, testKeySuite());
