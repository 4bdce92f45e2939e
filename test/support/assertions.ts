/** Envelope assertions shared by the HTTP tests. */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { specStatusesOf } from './spec-errors.js';

/** Asserts the error envelope with `status` and `code` (and the request id header); returns the body. */
export function assertError(res: LightMyRequestResponse, status: number, code: string): any {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.code, code);
  const spec = specStatusesOf(code);
  if (spec) assert.ok(spec.includes(status), `decisions.md section 3 gives ${code} ${spec.join('/')}, not ${status}`);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.requestId, res.headers['x-request-id']);
  return body;
}

/**
 * Asserts a 200 success envelope with response `code` (a message, the request id header); returns
 * its `data`.
 */
export function expectOk(res: LightMyRequestResponse, code: string): any {
  assert.equal(res.statusCode, 200, `status ${res.statusCode} body ${res.body}`);
  const body = res.json();
  assert.equal(body.success, true);
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  return body.data;
}

/** Asserts a 200 success envelope; returns the body. */
export function assertOk(res: LightMyRequestResponse): any {
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.success, true);
  return body;
}
