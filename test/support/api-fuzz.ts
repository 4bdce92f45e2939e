/**
 * Pieces shared by the fuzz tests of MCP (test/mcp/mcp-fuzz.test.ts) and of webhooks
 * (test/webhooks/webhook-fuzz.test.ts): their number of runs (MCP_FUZZ_RUNS, default 100), the REST
 * error envelope with a registered code and status, values nested thousands of levels deep and
 * their JSON text, the webhook signing secret's shape, the check that the other tenant's data never
 * appears in an answer, an upload of a one-pixel PNG, and generated properties that are left out or
 * of the wrong type.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../../src/http/errors.js';
import { type TestContext } from './harness.js';
import { type Tenant } from './seed.js';

export const RUNS = Number(process.env.MCP_FUZZ_RUNS ?? 100);

export const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const SECRET_RE = /whsec_[A-Za-z0-9_-]{43}/;

export type Body = any; // parsed JSON of a response

export function isRegistered(code: unknown): code is keyof typeof ERROR_REGISTRY {
  return typeof code === 'string' && Object.hasOwn(ERROR_REGISTRY, code);
}

/** A REST error envelope with a registered code and its registered status. */
export function assertEnvelope(res: LightMyRequestResponse): Body {
  const body = res.json();
  assert.equal(body.success, false, res.body);
  assert.ok(isRegistered(body.code), `registered code: ${res.body}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], `status of ${body.code}`);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.requestId, res.headers['x-request-id']);
  return body;
}

/**
 * A value nested `depth` arrays deep. In memory it is one array holding one empty array (so schema
 * type checks see an array of non-strings, as they would the real thing); `toJsonText` writes the
 * real nesting, which neither the test nor fast-check's reporter could serialise recursively.
 */
class Deep extends Array<unknown> {
  constructor(readonly depth: number) {
    super();
    this.push([]);
  }

  /** How fast-check prints it in a counterexample. */
  [fc.toStringMethod](): string {
    return `<${this.depth} nested arrays>`;
  }
}

const DEEP_MARK = '\u0000deep:';

/** JSON text of a value that may hold Deep markers. */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof Deep ? `${DEEP_MARK}${v.depth}` : v)) ?? 'null';
  return text.replace(/"\\u0000deep:(\d+)"/g, (_m, d: string) => '['.repeat(Number(d)) + ']'.repeat(Number(d)));
}

/** Nesting deep enough to overflow a recursive serialiser (a few thousand levels), and shallow. */
export const deepArb: fc.Arbitrary<Deep> = fc.constantFrom(3, 40, 6_000, 60_000).map((d) => new Deep(d));

/** Every token of the other tenant that is not in `request` must be absent from `response`. */
export function assertNoForeignData(foreign: readonly string[], request: string, response: string, where: string): void {
  for (const token of foreign) {
    if (request.includes(token)) continue; // an echo of the caller's own input reveals nothing
    assert.equal(response.includes(token), false, `${where}: the response carries the other tenant's ${token}`);
  }
}

export function multipart(name: string, mimeType: string, bytes: Buffer): { contentType: string; body: Buffer } {
  const boundary = '----fuzz-boundary-7d1f0c2a';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${mimeType}\r\n\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]) };
}

export async function uploadPixel(ctx: TestContext, t: Tenant, name = 'pixel.png'): Promise<Body> {
  const form = multipart(name, 'image/png', Buffer.from(PIXEL_PNG, 'base64'));
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': form.contentType },
    payload: form.body,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

export const ABSENT = Symbol('absent');
export type Maybe<T> = T | typeof ABSENT;

export function maybe<T>(arb: fc.Arbitrary<T>, present = 4, absent = 1): fc.Arbitrary<Maybe<T>> {
  return fc.oneof({ weight: present, arbitrary: arb }, { weight: absent, arbitrary: fc.constant(ABSENT) });
}

export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
  fc.double({ noNaN: true }),
);

/** `s` with one letter's case flipped (the `at`-th letter, cyclically), or with an x added when it has none. */
export function swapOneCase(s: string, at: number): string {
  const letters = [...s].map((c, i) => [c, i] as const).filter(([c]) => c.toLowerCase() !== c.toUpperCase());
  if (letters.length === 0) return `${s}x`;
  const [c, i] = letters[at % letters.length]!;
  const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
  return s.slice(0, i) + flipped + s.slice(i + 1);
}
