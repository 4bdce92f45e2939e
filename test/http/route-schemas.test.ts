/**
 * Route schemas compile on a route's first use (http/lazy-compilers.ts, issue 38): this suite is
 * what still fails at once when a route's request or response schema cannot be compiled, as the
 * eager start-up did. Building the app compiles nothing; compilePendingRouteSchemas() then compiles
 * every validator and serializer of every route without an error; and a lazily compiled route
 * answers as before: its refusals name the field (the validator's errors reach the error handler)
 * and its answer has the shape of its response schema.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePendingRouteSchemas } from '../../src/http/lazy-compilers.js';
import { buildApp } from '../../src/app.js';
import { call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';

describeEachDatabase(
  'route schemas compiled on first use',
  (get) => {
    test('every route schema of the app compiles; a freshly built app has compiled none of them', async () => {
      const ctx = get();
      compilePendingRouteSchemas();
      const app = await buildApp(ctx.deps);
      await app.ready();
      try {
        const compiled = compilePendingRouteSchemas();
        // The public, admin, console and MCP routes: each has validators and response serializers.
        assert.ok(compiled >= 400, `compiled ${compiled} route schemas`);
        assert.equal(compilePendingRouteSchemas(), 0, 'each compiles once');
      } finally {
        await app.close();
      }
    });

    test('a lazily validated route refuses bad input naming the field, and serializes by its schema', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 10_000, mode: 'test' });
      const bad = await call(ctx, 'GET', '/v1/jobs?limit=0x10', { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().code, 'INVALID_REQUEST');
      assert.match(bad.body, /limit/);
      const ok = await call(ctx, 'GET', '/v1/jobs?limit=5', { secret: t.secret, workspaceId: t.workspace.id });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().data, { items: [], nextCursor: null });
    });
  },
  testKeySuite(),
);
