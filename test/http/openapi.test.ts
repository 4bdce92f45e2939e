/** /openapi.json (OpenAPI 3.1 generated from the route schemas) and the /docs page. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { listRoutes } from '../../src/http/route-catalogue.js';
import { describeEachDatabase } from '../support/harness.js';
import { PUBLIC_ENDPOINTS } from '../support/endpoints.js';
import { openapiPath } from '../support/openapi-responses.js';

/** Fastify's `/a/:id` as OpenAPI's `/a/{id}`. */

describeEachDatabase('OpenAPI document and docs page', (get) => {
  async function fetchDocument() {
    const res = await get().app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    return res.json();
  }

  test('/openapi.json is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async () => {
    const doc = await fetchDocument();
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
  });

  test('/openapi.json lists every key-authenticated /v1 route with bearer security, scope and points', async () => {
    const ctx = get();
    const doc = await fetchDocument();
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: 'An API key (wask_…) issued by the operator.' });
    const publicRoutes = listRoutes(ctx.app).filter((r) => r.meta?.auth === 'key');
    assert.ok(publicRoutes.length >= PUBLIC_ENDPOINTS.length);
    for (const ep of PUBLIC_ENDPOINTS) {
      assert.ok(publicRoutes.some((r) => r.method === ep.method && r.url === ep.url), `${ep.method} ${ep.url} is registered as a key route`);
    }
    for (const route of publicRoutes) {
      const op = doc.paths[openapiPath(route.url)]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.url} is documented`);
      assert.deepEqual(op.security, [{ bearerAuth: [] }], `${route.url} declares bearer security`);
      assert.equal(op.operationId, route.meta!.code);
      assert.ok(op.description.includes(`\`${route.meta!.scope}\``), `${route.url} names its scope`);
      assert.match(op.description, /Costs (\d+ usage points?|usage points that depend)/, `${route.url} names its usage points`);
      assert.ok(op.responses['200'] || op.responses['202'], `${route.url} documents its success`);
      // Spec Errors 1: statuses documented for every endpoint.
      for (const status of ['400', '401', '403', '404', '409', '429']) assert.ok(op.responses[status]?.description, `${route.url} documents ${status}`);
      assert.ok(
        op.parameters.some((p: { in: string; name: string; required: boolean }) => p.in === 'header' && p.name === 'x-service-workspace' && p.required),
        `${route.url} documents the X-Service-Workspace header`,
      );
    }
  });

  test('/openapi.json: runs and retries document 402 and a required Idempotency-Key; output documents 410 and 503', async () => {
    const doc = await fetchDocument();
    for (const [path, method] of [['/v1/runs', 'post'], ['/v1/jobs/{jobId}/retry', 'post']] as const) {
      const op = doc.paths[path][method];
      assert.match(op.responses['402'].description, /INSUFFICIENT_CREDITS/, path);
      assert.match(op.responses['429'].description, /BUDGET_EXCEEDED/, path);
      const header = op.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key');
      assert.equal(header?.required, true, `${path}: Idempotency-Key is required`);
    }
    const output = doc.paths['/v1/jobs/{jobId}/output'].get;
    assert.match(output.responses['410'].description, /CURSOR_EXPIRED/);
    assert.match(output.responses['409'].description, /OUTPUT_CHANGED/);
    assert.ok(output.responses['503']);
    assert.match(doc.paths['/v1/jobs/{jobId}/cancel'].post.responses['409'].description, /JOB_NOT_CANCELLABLE/);
  });

  test('/openapi.json hides admin, system and docs routes', async () => {
    const ctx = get();
    const doc = await fetchDocument();
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length > 0);
    for (const path of paths) assert.match(path, /^\/v1\//, `${path} is a public /v1 path`);
    const hidden = listRoutes(ctx.app).filter((r) => r.meta?.auth !== 'key');
    assert.ok(hidden.some((r) => r.url.startsWith('/admin/')), 'admin routes exist in this app (ADMIN_TOKEN set)');
    for (const route of hidden) assert.equal(doc.paths[openapiPath(route.url)], undefined, `${route.url} is not documented`);
    assert.equal(JSON.stringify(doc).includes('/admin/'), false);
  });

  test('/openapi.json is the same document on every call and needs no key', async () => {
    const a = await fetchDocument();
    const b = await fetchDocument();
    assert.deepEqual(a, b);
  });

  test('/docs serves a swagger-ui HTML page that loads /openapi.json', async () => {
    const ctx = get();
    const page = await ctx.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<div id="swagger-ui">/);
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    const initializer = scripts.find((s) => s.includes('swagger-initializer'));
    assert.ok(initializer, `the page loads its initializer: ${scripts.join(', ')}`);
    const init = await ctx.app.inject({ method: 'GET', url: new URL(initializer, 'http://x/docs/').pathname });
    assert.equal(init.statusCode, 200);
    assert.match(init.body, /"url":"\/openapi\.json"/, 'swagger-ui is pointed at /openapi.json');
    for (const script of scripts) {
      const res = await ctx.app.inject({ method: 'GET', url: new URL(script, 'http://x/docs/').pathname });
      assert.equal(res.statusCode, 200, `${script} is served`);
    }
  });

  test('/docs has a same-origin CSP that does not force https (plain-http self-hosting works)', async () => {
    const ctx = get();
    const page = await ctx.app.inject({ method: 'GET', url: '/docs' });
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.doesNotMatch(csp, /upgrade-insecure-requests/);
  });
});
