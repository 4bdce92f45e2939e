/**
 * The refusal check of test/support/openapi-responses.ts, which the suites that provoke refusals
 * turn on (`checkRefusals`): concrete URLs resolve to their documented route, a documented status
 * with the error envelope passes, and an undocumented status or a body outside the documented
 * error schema fails the request that provoked it. Also the answers it is built on: each refusal
 * class of a key route is documented with the error envelope, and every route with a JSON body
 * documents 413 PAYLOAD_TOO_LARGE (found by this check: the body limit's refusal was undocumented);
 * every route documents 503 UNAVAILABLE and every route that writes 507 STORAGE_FULL. The estimate
 * is asked with a test key (an operation on the simulated provider).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { checkRefusals, servedOpenApi } from '../support/openapi-responses.js';

describeEachDatabase(
  'OpenAPI checks of refusals',
  (get) => {
    test('a concrete URL resolves to its documented route; undocumented ones resolve to nothing', async () => {
      const openapi = await servedOpenApi(get().app);
      const id = randomUUID();
      assert.equal(openapi.documentedPath('GET', `/v1/jobs/${id}/output?cursor=abc`), '/v1/jobs/{jobId}/output');
      assert.equal(openapi.documentedPath('POST', `/v1/jobs/${id}/cancel`), '/v1/jobs/{jobId}/cancel');
      assert.equal(openapi.documentedPath('GET', '/v1/jobs?limit=5'), '/v1/jobs');
      assert.equal(openapi.documentedPath('DELETE', '/v1/jobs'), undefined, 'a method the route does not take');
      assert.equal(openapi.documentedPath('GET', '/admin/v1/workspaces'), undefined, 'the admin API is not in the public document');
    });

    test('a documented refusal passes; an undocumented status, a success status or a body outside the error envelope fails', async () => {
      const openapi = await servedOpenApi(get().app);
      const body = { success: false, code: 'NOT_FOUND', message: 'Not found.', requestId: randomUUID() };
      openapi.assertRefusal('GET', `/v1/jobs/${randomUUID()}`, 404, body);
      assert.throws(() => openapi.assertRefusal('GET', `/v1/jobs/${randomUUID()}`, 418, body), /status 418 is documented/);
      assert.throws(() => openapi.assertRefusal('GET', `/v1/jobs/${randomUUID()}`, 200, body), /not a refusal/);
      assert.throws(() => openapi.assertRefusal('GET', `/v1/jobs/${randomUUID()}`, 404, { ...body, success: true }), /satisfies its documented schema/);
      const { requestId: _, ...withoutId } = body;
      assert.throws(() => openapi.assertRefusal('GET', `/v1/jobs/${randomUUID()}`, 404, withoutId), /satisfies its documented schema/);
      assert.throws(() => openapi.assertRefusal('GET', '/admin/v1/workspaces', 404, body), /a documented route/);
    });

    test('every route documents 503 UNAVAILABLE (stopping, database unreachable), and every route that writes 507 STORAGE_FULL', async () => {
      const openapi = await servedOpenApi(get().app);
      let routes = 0;
      for (const [path, methods] of Object.entries<any>(openapi.doc.paths)) {
        for (const [method, op] of Object.entries<any>(methods)) {
          if (!op?.responses) continue;
          routes++;
          assert.ok(op.responses['503']?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} documents 503`);
          const writes = method !== 'get' && method !== 'head';
          assert.equal(Boolean(op.responses['507']), writes, `${method.toUpperCase()} ${path} ${writes ? 'documents' : 'does not document'} 507`);
        }
      }
      assert.ok(routes >= 20, `documented routes: ${routes}`);
      const body = (code: string) => ({ success: false, code, message: 'm', requestId: randomUUID(), details: {} });
      openapi.assertRefusal('GET', '/v1/usage', 503, body('UNAVAILABLE'));
      openapi.assertRefusal('POST', '/v1/media/upload', 507, body('STORAGE_FULL'));
      openapi.assertRefusal('POST', '/v1/runs', 507, body('STORAGE_FULL'));
      assert.throws(() => openapi.assertRefusal('GET', '/v1/usage', 507, body('STORAGE_FULL')), /status 507 is documented/);
    });

    test('every route with a JSON body documents 413 PAYLOAD_TOO_LARGE, and an oversized body is answered so', async () => {
      const ctx = get();
      const { doc } = await servedOpenApi(ctx.app);
      let withBody = 0;
      for (const [path, methods] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(methods)) {
          if (!op?.requestBody?.content?.['application/json']) continue;
          withBody++;
          assert.ok(op.responses?.['413']?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} documents 413`);
        }
      }
      assert.ok(withBody >= 4, `routes with a JSON body: ${withBody}`);
      await checkRefusals(ctx.app);
      const t = await seedTenant(ctx.deps, { credits: 1000, mode: 'test' });
      const res = await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'speech.generate', input: { text: 'x'.repeat(3 * 1024 * 1024) } } });
      assert.equal(res.statusCode, 413, res.body);
      assert.equal(res.json().code, 'PAYLOAD_TOO_LARGE');
    });
  },
  testKeySuite(),
  ['sqlite'],
);
