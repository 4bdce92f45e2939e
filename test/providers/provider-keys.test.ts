/**
 * A workspace's own provider keys through the admin API: stored sealed under SECRET_KEY (the
 * column never holds the plaintext and opens only with the keyring, only for its own row), never
 * returned, replaced when set again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { Keyring } from '../../src/lib/crypto.js';
import { readProviderKey } from '../../src/modules/provider-keys/service.js';
import { expectOk, assertError } from '../support/assertions.js';

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';



function setKey(ctx: TestContext, workspaceId: string, provider: string, apiKey: string) {
  return admin(ctx, `/admin/v1/workspaces/${workspaceId}/provider-keys`, { provider, apiKey });
}

async function sealedRows(ctx: TestContext, workspaceId: string) {
  return ctx.deps.db.selectFrom('provider_keys').selectAll().where('workspace_id', '=', workspaceId).execute();
}

describeEachDatabase('provider keys', (get) => {
  test('provider keys: set returns {providerKey} without the key itself (ADMIN_PROVIDER_KEYS_SET)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const apiKey = 'sk-live-plaintext-0123456789';
    const res = await setKey(ctx, t.workspace.id, 'openai', apiKey);
    const data = expectOk(res, 'ADMIN_PROVIDER_KEYS_SET');
    assert.deepEqual(Object.keys(data.providerKey).sort(), ['createdAt', 'id', 'provider', 'updatedAt', 'workspaceId']);
    assert.equal(data.providerKey.provider, 'openai');
    assert.equal(data.providerKey.workspaceId, t.workspace.id);
    assert.equal(res.body.includes(apiKey), false, 'the response never contains the key');
    assert.equal(res.body.includes('sk-live'), false);
  });

  test('provider keys: the sealed_key column never holds the plaintext and decrypts with deps.keyring to it', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const apiKey = 'r8_secret_value_for_replicate_ABCDEF';
    const { providerKey } = expectOk(await setKey(ctx, t.workspace.id, 'replicate', apiKey), 'ADMIN_PROVIDER_KEYS_SET');
    const [row] = await sealedRows(ctx, t.workspace.id);
    assert.ok(row);
    assert.equal(row.id, providerKey.id);
    assert.equal(row.sealed_key.includes(apiKey), false);
    assert.equal(JSON.stringify(row).includes(apiKey), false, 'no column holds the plaintext');
    assert.equal(Buffer.from(row.sealed_key.split('.').pop()!, 'base64url').toString('utf8').includes(apiKey), false);
    assert.equal(ctx.deps.keyring.decrypt(row.sealed_key, `provider-key:${row.id}`), apiKey);
    assert.equal(await readProviderKey(ctx.deps, t.workspace.id, 'replicate'), apiKey);
  });

  test('provider keys: the sealed value opens only for its own row and only with the deployment SECRET_KEY', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    expectOk(await setKey(ctx, a.workspace.id, 'openai', 'key-of-a'), 'ADMIN_PROVIDER_KEYS_SET');
    expectOk(await setKey(ctx, b.workspace.id, 'openai', 'key-of-b'), 'ADMIN_PROVIDER_KEYS_SET');
    const [rowA] = await sealedRows(ctx, a.workspace.id);
    const [rowB] = await sealedRows(ctx, b.workspace.id);
    assert.throws(() => ctx.deps.keyring.decrypt(rowA!.sealed_key, `provider-key:${rowB!.id}`));
    assert.throws(() => new Keyring('another-secret-key-0123456789abcdef0123456789').decrypt(rowA!.sealed_key, `provider-key:${rowA!.id}`));
    // A sealed value copied into another workspace's row does not open there.
    await ctx.deps.db.updateTable('provider_keys').set({ sealed_key: rowA!.sealed_key }).where('id', '=', rowB!.id).execute();
    await assert.rejects(readProviderKey(ctx.deps, b.workspace.id, 'openai'));
    assert.equal(await readProviderKey(ctx.deps, a.workspace.id, 'openai'), 'key-of-a');
  });

  test('provider keys: setting again replaces the key in the same row (same id and createdAt, new updatedAt)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const first = expectOk(await setKey(ctx, t.workspace.id, 'openai', 'old-key-1'), 'ADMIN_PROVIDER_KEYS_SET').providerKey;
    ctx.clock.advance(60_000);
    const second = expectOk(await setKey(ctx, t.workspace.id, 'openai', 'new-key-2'), 'ADMIN_PROVIDER_KEYS_SET').providerKey;
    assert.equal(second.id, first.id);
    assert.equal(second.createdAt, first.createdAt);
    assert.equal(second.updatedAt, new Date(ctx.clock.now()).toISOString());
    assert.notEqual(second.updatedAt, first.updatedAt);
    const rows = await sealedRows(ctx, t.workspace.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.sealed_key.includes('new-key-2'), false);
    assert.equal(await readProviderKey(ctx.deps, t.workspace.id, 'openai'), 'new-key-2');
  });

  test('provider keys: one key per (workspace, provider); other providers and workspaces are separate', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    expectOk(await setKey(ctx, a.workspace.id, 'openai', 'a-openai'), 'ADMIN_PROVIDER_KEYS_SET');
    expectOk(await setKey(ctx, a.workspace.id, 'replicate', 'a-replicate'), 'ADMIN_PROVIDER_KEYS_SET');
    expectOk(await setKey(ctx, b.workspace.id, 'openai', 'b-openai'), 'ADMIN_PROVIDER_KEYS_SET');
    assert.equal((await sealedRows(ctx, a.workspace.id)).length, 2);
    assert.equal(await readProviderKey(ctx.deps, a.workspace.id, 'openai'), 'a-openai');
    assert.equal(await readProviderKey(ctx.deps, a.workspace.id, 'replicate'), 'a-replicate');
    assert.equal(await readProviderKey(ctx.deps, b.workspace.id, 'openai'), 'b-openai');
    assert.equal(await readProviderKey(ctx.deps, b.workspace.id, 'replicate'), undefined);
  });

  test('provider keys: concurrent sets of one provider leave one row that opens to one of the keys', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const keys = ['k-1', 'k-2', 'k-3', 'k-4'];
    const results = await Promise.all(keys.map((k) => setKey(ctx, t.workspace.id, 'openai', k)));
    for (const r of results) expectOk(r, 'ADMIN_PROVIDER_KEYS_SET');
    const rows = await sealedRows(ctx, t.workspace.id);
    assert.equal(rows.length, 1);
    assert.ok(keys.includes((await readProviderKey(ctx.deps, t.workspace.id, 'openai'))!));
  });

  test('provider keys: bad provider names, empty or oversized keys and unknown properties are 400; unknown workspace 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const url = `/admin/v1/workspaces/${t.workspace.id}/provider-keys`;
    for (const body of [
      { provider: 'OpenAI', apiKey: 'k' },
      { provider: '', apiKey: 'k' },
      { provider: 'open ai', apiKey: 'k' },
      { provider: 'x'.repeat(65), apiKey: 'k' },
      { provider: 'openai', apiKey: '' },
      { provider: 'openai', apiKey: 'k'.repeat(4097) },
      { provider: 'openai' },
      { apiKey: 'k' },
      { provider: 'openai', apiKey: 'k', note: 'x' },
    ]) {
      assertError(await admin(ctx, url, body), 400, 'INVALID_REQUEST');
    }
    assertError(await setKey(ctx, UNKNOWN_ID, 'openai', 'k'), 404, 'NOT_FOUND');
    assert.equal((await sealedRows(ctx, t.workspace.id)).length, 0);
  });
});
