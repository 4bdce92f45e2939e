/**
 * Responses checked against the OpenAPI document the service serves (GET /openapi.json): the
 * documented status exists for the route, and the body satisfies its documented JSON schema
 * (compiled apart from the service's own validators, with Ajv's JSON Schema 2020-12 dialect that
 * OpenAPI 3.1 uses). Refusals too: `assertRefusal` takes a concrete URL (the documented path it
 * falls under is found), and `checkRefusals(app)` holds every error answer an in-process test
 * provokes through `app.inject` on a documented route to its documented status and error schema.
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;
const DOC_ID = 'https://service.test/openapi.json';

export interface OpenApiResponses {
  doc: any;
  /** Asserts that `status` is documented for the route and that `body` satisfies its schema. */
  assertResponse(method: string, route: string, status: number, body: unknown, what?: string): void;
  /** The documented path (`/v1/jobs/{jobId}`) a concrete URL (`/v1/jobs/0192…?limit=5`) falls under for `method`, if any. */
  documentedPath(method: string, url: string): string | undefined;
  /**
   * A refusal of a concrete URL: the route is documented, `status` is among its documented
   * answers, and `body` satisfies that answer's schema (the error envelope) with a 4xx or 5xx
   * status. A URL no documented route takes (admin API, hidden routes) fails.
   */
  assertRefusal(method: string, url: string, status: number, body: unknown, what?: string): void;
}

/** Fastify's `/a/:id` as OpenAPI's `/a/{id}`. */
export const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const pointerSegment = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

const cache = new WeakMap<FastifyInstance, OpenApiResponses>();

export async function servedOpenApi(app: FastifyInstance): Promise<OpenApiResponses> {
  const hit = cache.get(app);
  if (hit) return hit;
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200, res.body);
  const doc = res.json();
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
  ajv.addSchema(doc, DOC_ID);
  const validators = new Map<string, ValidateFunction>();
  const checker: OpenApiResponses = {
    doc,
    assertResponse(method, route, status, body, what = `${method} ${route}`) {
      const path = openapiPath(route);
      const op = doc.paths?.[path]?.[method.toLowerCase()];
      assert.ok(op, `${what}: documented in /openapi.json`);
      const response = op.responses?.[String(status)];
      assert.ok(response, `${what}: status ${status} is documented (${Object.keys(op.responses ?? {}).join(', ')})`);
      assert.ok(response.content?.['application/json']?.schema, `${what}: ${status} documents a JSON body schema`);
      const key = `${path} ${method} ${status}`;
      let validate = validators.get(key);
      if (!validate) {
        const pointer = ['paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'].map(pointerSegment).join('/');
        validate = ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
        validators.set(key, validate);
      }
      assert.ok(validate(body), `${what}: the ${status} body satisfies its documented schema: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body).slice(0, 600)}`);
    },
    documentedPath(method, url) {
      const pathname = new URL(url, 'http://service.test').pathname;
      const m = method.toLowerCase();
      // A literal path before a template (`/v1/runs/lookup` before `/v1/runs/{id}`, were there both).
      const candidates = templates.filter((t) => doc.paths[t.path]?.[m] && t.pattern.test(pathname));
      return candidates.sort((a, b) => a.params - b.params)[0]?.path;
    },
    assertRefusal(method, url, status, body, what = `${method} ${url}`) {
      assert.ok(status >= 400 && status <= 599, `${what}: ${status} is not a refusal`);
      const path = checker.documentedPath(method, url);
      assert.ok(path, `${what}: a documented route of /openapi.json`);
      checker.assertResponse(method, path, status, body, `${what} (${status} ${(body as { code?: unknown } | null)?.code})`);
    },
  };
  const templates = Object.keys(doc.paths ?? {}).map((path) => ({
    path,
    params: (path.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${path.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('')}$`),
  }));
  cache.set(app, checker);
  return checker;
}

const checked = new WeakSet<FastifyInstance>();

/**
 * From now on, every answer with a 4xx or 5xx status that `app.inject` gives on a route the
 * OpenAPI document describes (the public /v1 API) must be one of the route's documented answers,
 * with a body satisfying its error schema: the assertion fails the test that provoked it. The
 * admin API, the console and other hidden routes are not in the document and are not checked.
 */
export async function checkRefusals(app: FastifyInstance): Promise<void> {
  if (checked.has(app)) return;
  const openapi = await servedOpenApi(app);
  const inject = app.inject.bind(app) as (opts: unknown) => Promise<LightMyRequestResponse>;
  checked.add(app);
  (app as unknown as { inject: unknown }).inject = (opts?: unknown, callback?: unknown) => {
    if (opts === undefined || typeof opts !== 'object' || callback !== undefined) return (inject as (...a: unknown[]) => unknown)(opts, callback);
    return inject(opts).then((res) => {
      const o = opts as { method?: string; url?: string | { pathname?: string }; path?: string };
      const url = typeof o.url === 'string' ? o.url : (o.path ?? '');
      const method = o.method ?? 'GET';
      if (res.statusCode >= 400 && String(res.headers['content-type'] ?? '').startsWith('application/json') && openapi.documentedPath(method, url)) {
        openapi.assertRefusal(method, url, res.statusCode, res.json(), `${method} ${url.split('?')[0]}`);
      }
      return res;
    });
  };
}
