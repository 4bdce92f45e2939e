/**
 * Responses checked against the OpenAPI document the service serves (GET /openapi.json): the
 * documented status exists for the route, and the body satisfies its documented JSON schema
 * (compiled apart from the service's own validators, with Ajv's JSON Schema 2020-12 dialect that
 * OpenAPI 3.1 uses).
 */
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;
const DOC_ID = 'https://service.test/openapi.json';

export interface OpenApiResponses {
  doc: any;
  /** Asserts that `status` is documented for the route and that `body` satisfies its schema. */
  assertResponse(method: string, route: string, status: number, body: unknown, what?: string): void;
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
  };
  cache.set(app, checker);
  return checker;
}
