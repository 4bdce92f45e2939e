/**
 * Migration 0015 (cost analytics, issue 36) on every database, from the schema before it: ledger
 * entries of jobs get the job's operation (and its key where they had none); entries of no job
 * keep null; the cost rollup starts equal to the ledger summed per hour and per day.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Migrator, type Kysely } from 'kysely';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { newId } from '../../src/lib/ids.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';
import { assertRollupMatchesLedger } from '../support/costs-oracle.js';

for (const name of testDatabaseNames()) {
  describe(`migration 0015 [${name}]`, () => {
    let database: TestDatabase | undefined;
    let handle: DatabaseHandle;
    before(async () => {
      if (name === 'pglite') handle = await openDatabase('pglite:');
      else handle = (database = await createTestDatabase(name)).handle;
    });
    after(async () => {
      await handle.close();
      await database?.dispose();
    });

    test('rule "attribution backfill": entries of jobs get operationId (and keyId where missing) from their job; the rollup equals the ledger', async () => {
      const db = handle.db as Kysely<any>;
      const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0014-console-sessions');
      if (error) throw error;
      const userId = newId();
      const workspaceId = newId();
      const keyId = newId();
      await db.insertInto('users').values({ id: userId, email: `${userId}@example.com`, name: 'u', created_at_ms: 0 }).execute();
      await db.insertInto('workspaces').values({ id: workspaceId, name: 'w', plan: 'pro', owner_user_id: userId, created_at_ms: 0, updated_at_ms: 0 }).execute();
      const jobId = newId();
      const t0 = Date.UTC(2026, 10, 1, 10, 15);
      await db.insertInto('jobs').values({
        id: jobId, workspace_id: workspaceId, key_id: keyId, operation_id: 'image.generate', tool_slug: 'image', status: 'completed', execution_origin: 'api',
        funding: 'credits', input_json: '{}', output_json: null, output_sha256: null, progress: 100, cost_mc: 300, max_cost_mc: 500, error_code: null,
        version: 2, attempt: 1, steps_total: 1, steps_done: 1, checkpoint_json: null, created_at_ms: t0, started_at_ms: t0, completed_at_ms: t0,
        updated_at_ms: t0, run_after_ms: 0, lease_token: 0, lease_owner: null, lease_expires_at_ms: null, recoveries: 0,
      }).execute();
      const entry = (type: string, amount: number, at: number, job: string | null, key: string | null) => ({
        id: newId(), workspace_id: workspaceId, type, amount_mc: amount, allocation_id: null, key_id: key, tool_slug: job ? 'image' : null, job_id: job,
        execution_origin: job ? 'api' : null, created_at_ms: at,
      });
      const rows = [
        entry('purchase', 10_000, t0 - 1, null, null),
        entry('usage', -100, t0, jobId, keyId),
        entry('usage', -200, t0 + 3_600_000, jobId, null),
        entry('adjustment', 50, t0 + 86_400_000, null, null),
        entry('adjustment', -20, t0 + 86_400_000, null, null),
        entry('expiration', -7, t0 + 2 * 86_400_000, null, null),
      ];
      await db.insertInto('credit_transactions').values(rows).execute();
      await migrateToLatest(handle.db);
      const after = new Map((await db.selectFrom('credit_transactions').select(['id', 'operation_id', 'key_id']).execute()).map((r: any) => [r.id, [r.operation_id, r.key_id]]));
      assert.deepEqual(after.get(rows[1]!.id), ['image.generate', keyId]);
      assert.deepEqual(after.get(rows[2]!.id), ['image.generate', keyId], 'the key of the job fills a missing keyId');
      assert.deepEqual(after.get(rows[0]!.id), [null, null], 'entries of no job stay unattributed');
      await assertRollupMatchesLedger({ db: handle.db } as any, workspaceId);
      const kinds = (await db.selectFrom('cost_rollups').select(['kind', 'span']).where('workspace_id', '=', workspaceId).execute()).map((r: any) => `${r.span}:${r.kind}`).sort();
      assert.deepEqual(kinds, ['day:debit', 'day:expiration', 'day:purchase', 'day:refund', 'day:usage', 'hour:debit', 'hour:expiration', 'hour:purchase', 'hour:refund', 'hour:usage', 'hour:usage']);
    });
  });
}
