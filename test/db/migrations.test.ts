/** Migrations that rewrite data: each checked from the schema before it, on every database. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Migrator, type Kysely } from 'kysely';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { migrations } from '../../src/db/migrations/index.js';
import { newId } from '../../src/lib/ids.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase } from '../support/databases.js';

async function migrateTo(db: Kysely<any>, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(name);
  if (error) throw error;
}

for (const name of testDatabaseNames()) {
  describe(`migrations [${name}]`, () => {
    let database: TestDatabase | undefined;
    let handle: DatabaseHandle;
    before(async () => {
      // PGlite suites usually start from a migrated template: this one needs an empty database.
      if (name === 'pglite') handle = await openDatabase('pglite:');
      else handle = (database = await createTestDatabase(name)).handle;
    });
    after(async () => {
      await handle.close();
      await database?.dispose();
    });

    test('0009: a retried job still waiting or running gets the bound of all its attempts; finished and first attempts are left as they were', async () => {
      const db = handle.db as Kysely<any>;
      await migrateTo(db, '0008-allocation-hot-updates');
      const userId = newId();
      const workspaceId = newId();
      await db.insertInto('users').values({ id: userId, email: `${userId}@example.com`, name: 'u', created_at_ms: 0 }).execute();
      await db.insertInto('workspaces').values({ id: workspaceId, name: 'w', plan: 'pro', owner_user_id: userId, created_at_ms: 0, updated_at_ms: 0 }).execute();
      const job = (status: string, attempt: number, cost: number, max: number) => ({
        id: newId(), workspace_id: workspaceId, key_id: null, operation_id: 'sprite.generate', tool_slug: 'sprite', status, execution_origin: 'api',
        funding: 'credits', input_json: '{}', output_json: null, output_sha256: null, progress: 0, cost_mc: cost, max_cost_mc: max, error_code: null,
        version: 1, attempt, steps_total: 4, steps_done: 2, checkpoint_json: null, created_at_ms: 0, started_at_ms: null, completed_at_ms: null,
        updated_at_ms: 0, run_after_ms: 0, lease_token: 0, lease_owner: null, lease_expires_at_ms: null, recoveries: 0,
      });
      const rows = {
        retriedPending: job('pending', 2, 3000, 3000),
        retriedRunning: job('processing', 3, 4500, 1500),
        retriedDone: job('completed', 2, 6000, 3000),
        firstAttempt: job('pending', 1, 0, 6000),
      };
      await db.insertInto('jobs').values(Object.values(rows)).execute();
      await migrateToLatest(handle.db);
      const after = new Map((await db.selectFrom('jobs').select(['id', 'max_cost_mc', 'cost_mc']).execute()).map((r: any) => [r.id, Number(r.max_cost_mc)]));
      assert.equal(after.get(rows.retriedPending.id), 6000);
      assert.equal(after.get(rows.retriedRunning.id), 6000);
      assert.equal(after.get(rows.retriedDone.id), 3000, 'finished jobs keep their recorded figures');
      assert.equal(after.get(rows.firstAttempt.id), 6000);
    });
  });
}
