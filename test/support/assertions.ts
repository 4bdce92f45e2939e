/** Envelope assertions shared by the HTTP tests. */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../../src/http/errors.js';
import { specStatusesOf } from './spec-errors.js';

/** What the envelope assertions read of a response (an injected one, or one read with fetch: fetchResponse). */
type Answer = Pick<LightMyRequestResponse, 'statusCode' | 'body' | 'headers' | 'json'>;

/** Asserts the error envelope with `status` and `code` (and the request id header); returns the body. */
export function assertError(res: Answer, status: number, code: string): any {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode} ${res.body}`);
  const body = res.json();
  assert.equal(body.success, false);
  assert.equal(body.code, code);
  const spec = specStatusesOf(code);
  if (spec) assert.ok(spec.includes(status), `decisions.md section 3 gives ${code} ${spec.join('/')}, not ${status}`);
  assert.equal(typeof body.message, 'string');
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'X-Request-Id header present');
  assert.equal(body.requestId, res.headers['x-request-id'], 'requestId in the body equals the X-Request-Id header');
  return body;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An error envelope of any code, for fuzzers that do not know which refusal comes: the code is
 * registered, answered with its registered status (one decisions.md section 3 allows), with a
 * message and a request id; `requestIdHeader` is the X-Request-Id the body's requestId must equal
 * (absent for an answer without headers, such as an MCP tool result). Returns the body.
 */
export function assertRegisteredError(res: { statusCode: number; body: string }, requestIdHeader?: string): { code: keyof typeof ERROR_REGISTRY; details?: Record<string, unknown> } {
  const body = JSON.parse(res.body);
  assert.equal(body.success, false, res.body);
  assert.ok(Object.hasOwn(ERROR_REGISTRY, body.code), `registered code: ${body.code}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], `status of ${body.code}: ${res.statusCode}`);
  const spec = specStatusesOf(body.code);
  assert.ok(!spec || spec.includes(res.statusCode), `decisions.md section 3 gives ${body.code} ${spec?.join('/')}, not ${res.statusCode}`);
  assert.equal(typeof body.message, 'string');
  assert.match(String(body.requestId), UUID);
  if (requestIdHeader !== undefined) assert.equal(body.requestId, requestIdHeader);
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

/** Asserts the status, and the envelope's `code` when one is named (the body in the message). */
export function assertStatus(res: LightMyRequestResponse, status: number, code?: string): void {
  assert.equal(res.statusCode, status, `status ${res.statusCode}: ${res.body}`);
  if (code) assert.equal(res.json().code, code, res.body);
}

/** A response read with fetch (a real socket), read whole, in the shape the assertions above take. */
export async function fetchResponse(res: Response): Promise<Answer> {
  const body = await res.text();
  return { statusCode: res.status, body, headers: Object.fromEntries(res.headers), json: () => JSON.parse(body) } as Answer;
}
