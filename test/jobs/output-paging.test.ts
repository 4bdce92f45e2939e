/**
 * Complete-output pages written from the document's bytes (src/modules/jobs/output-body.ts): every
 * body is byte for byte what the route's response schema serializer writes for the same envelope,
 * all pages of one read join to one document signed at one time, every read's document is the one
 * presentResult renders at its signing time (also when it is assembled from a cached template,
 * src/modules/jobs/output-document.ts), and a result changed under a cached document still ends
 * the read with 409 OUTPUT_CHANGED.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import { envelopeSchema } from '../../src/http/envelope.js';
import { OutputSchema } from '../../src/modules/jobs/routes.js';
import { presentResult } from '../../src/modules/jobs/snapshot.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { drain, run } from '../support/jobs.js';
import { checkRefusals } from '../support/openapi-responses.js';

/** What the route's schema serializer (fast-json-stringify, as Fastify compiles it) writes for `body`. */
async function schemaSerializer() {
  const app = Fastify();
  let next: unknown;
  app.get('/', { schema: { response: { 200: envelopeSchema(OutputSchema) } } }, async () => next);
  await app.ready();
  return async (body: unknown) => {
    next = body;
    return (await app.inject({ method: 'GET', url: '/' })).rawPayload;
  };
}

/** A stored result whose JSON needs every kind of escaping, dense in places, sparse in others. */
function awkwardResult() {
  const items = Array.from({ length: 1500 }, (_, i) => ({ k: `a"b\\c\n\t\u0001${i}`, lone: '\ud800x\udfff', quote: '"'.repeat(i % 7) }));
  return {
    audio: { mediaId: '00000000-0000-4000-8000-000000000001', mimeType: 'audio/wav', name: 'a "quoted" name.wav' },
    frames: [{ mediaId: '00000000-0000-4000-8000-000000000002', mimeType: 'image/png', url: 'stale', index: 0 }],
    text: 'Déjà vu € 😀 \u2028\u2029 '.repeat(2500),
    items,
    tail: 'x\\'.repeat(9000),
  };
}

async function jobWithResult(ctx: TestContext, t: Tenant, result: unknown): Promise<string> {
  const jobId = (await run(ctx, t, 'music.generate', { prompt: 'x' })).json().data.jobId;
  await drain(ctx);
  const json = typeof result === 'string' ? result : JSON.stringify(result);
  await ctx.deps.db.updateTable('jobs').set({ output_json: json, output_sha256: createHash('sha256').update(json).digest('hex') }).where('id', '=', jobId).execute();
  return jobId;
}

/** All pages of one read, joined; the read starts now (its signing time). */
async function readAll(ctx: TestContext, t: Tenant, jobId: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let cursor: string | undefined;
  do {
    const res = await call(ctx, 'GET', `/v1/jobs/${jobId}/output`, { secret: t.secret, workspaceId: t.workspace.id, ...(cursor ? { query: { cursor } } : {}) });
    assert.equal(res.statusCode, 200, res.body);
    parts.push(Buffer.from(res.json().data.fragment, 'utf8'));
    cursor = res.json().data.nextCursor ?? undefined;
  } while (cursor);
  return Buffer.concat(parts);
}

describeEachDatabase('complete output pages', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  const page = (ctx: TestContext, t: Tenant, jobId: string, cursor?: string) =>
    call(ctx, 'GET', `/v1/jobs/${jobId}/output`, { secret: t.secret, workspaceId: t.workspace.id, ...(cursor ? { query: { cursor } } : {}) });

  async function tenant(ctx: TestContext): Promise<Tenant> {
    const t = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 10_000_000 } });
    return t;
  }

  test('every page is byte for byte the schema serializer’s envelope; pages join to the verified document', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const jobId = await jobWithResult(ctx, t, awkwardResult());
    const serialize = await schemaSerializer();
    const parts: Buffer[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await page(ctx, t, jobId, cursor);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      const body = res.json();
      assert.deepEqual(res.rawPayload, await serialize(body), `page ${pages}`);
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      const fragment = Buffer.from(body.data.fragment, 'utf8');
      assert.ok(fragment.length <= 8192);
      assert.equal(body.data.offsetBytes, Buffer.concat(parts).length);
      parts.push(fragment);
      cursor = body.data.nextCursor ?? undefined;
      pages++;
      if (!cursor) {
        const doc = Buffer.concat(parts);
        assert.equal(doc.length, body.data.totalBytes);
        assert.equal(createHash('sha256').update(doc).digest('hex'), body.data.sha256);
        const parsed = JSON.parse(doc.toString('utf8'));
        assert.deepEqual(parsed.items, awkwardResult().items);
        assert.equal(parsed.text, awkwardResult().text);
        assert.match(parsed.audio.url, /^http/);
        assert.notEqual(parsed.frames[0].url, 'stale');
      }
    } while (cursor);
    assert.ok(pages > 10);
  });

  test('one read is one document signed at its start; reading a page again gives the same fragment; a new read renews the URLs', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const jobId = await jobWithResult(ctx, t, awkwardResult());
    const ttlMs = ctx.config.outputCursorTtlS * 1000;
    const first = await page(ctx, t, jobId);
    assert.equal(first.json().data.snapshotExpiresAt, new Date(ctx.clock.now() + ttlMs).toISOString());
    ctx.clock.advance(5_000);
    const second = await page(ctx, t, jobId, first.json().data.nextCursor);
    // Each page's cursor lives OUTPUT_CURSOR_TTL_S from that page; snapshotExpiresAt says until when.
    assert.equal(second.json().data.snapshotExpiresAt, new Date(ctx.clock.now() + ttlMs).toISOString());
    ctx.clock.advance(5_000);
    const again = await page(ctx, t, jobId, first.json().data.nextCursor);
    const { nextCursor: _n, snapshotExpiresAt: _s, ...sameFields } = second.json().data;
    const { nextCursor: _n2, snapshotExpiresAt: _s2, ...againFields } = again.json().data;
    assert.deepEqual(againFields, sameFields, 'the same fragment of the same document');
    assert.equal(second.json().data.sha256, first.json().data.sha256);
    const renewed = await page(ctx, t, jobId);
    assert.notEqual(renewed.json().data.sha256, first.json().data.sha256, 'file URLs are signed anew');
    assert.equal(renewed.json().data.totalBytes, first.json().data.totalBytes);
  });

  test('a result changed while its document is cached ends the read with 409 OUTPUT_CHANGED; a new read serves the new result', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const jobId = await jobWithResult(ctx, t, { text: 'a'.repeat(40_000) });
    const first = (await page(ctx, t, jobId)).json().data;
    assert.equal((await page(ctx, t, jobId, first.nextCursor)).statusCode, 200);
    const replaced = JSON.stringify({ text: 'b'.repeat(40_000) });
    await ctx.deps.db.updateTable('jobs').set({ output_json: replaced, output_sha256: createHash('sha256').update(replaced).digest('hex') }).where('id', '=', jobId).execute();
    const changed = await page(ctx, t, jobId, first.nextCursor);
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().code, 'OUTPUT_CHANGED');
    const fresh = (await page(ctx, t, jobId)).json().data;
    assert.ok(fresh.fragment.startsWith('{"text":"bbb'));
  });

  test('every page is authorized and charged: another workspace gets 404, and points run out mid-read', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const jobId = await jobWithResult(ctx, t, { text: 'a'.repeat(40_000) });
    const first = (await page(ctx, t, jobId)).json().data;
    const other = await seedTenant(ctx.deps, { credits: 1_000, mode: 'test' });
    const foreign = await call(ctx, 'GET', `/v1/jobs/${jobId}/output`, { secret: other.secret, workspaceId: other.workspace.id, query: { cursor: first.nextCursor } });
    assert.equal(foreign.statusCode, 404);
    await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 6, pointsPerMonth: 10_000_000 } });
    let cursor = first.nextCursor as string;
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await page(ctx, t, jobId, cursor);
      codes.push(res.statusCode);
      if (res.statusCode === 200) cursor = res.json().data.nextCursor;
    }
    assert.ok(codes.includes(429), `pages are charged: ${codes.join(',')}`);
  });

  test('each read is exactly what presentResult renders at its signing time, from a cached template or rendered in full', async () => {
    const ctx = get();
    const t = await tenant(ctx);
    const stored = awkwardResult();
    // An own "__proto__" key is lost by presentResult's copy, so this result gets no template.
    const odd = `{"__proto__":{"x":1},"a":{"mediaId":"00000000-0000-4000-8000-000000000003","mimeType":"image/png"},"t":${JSON.stringify('z"'.repeat(9000))}}`;
    const noFiles = { text: 'Déjà vu "€" 😀 '.repeat(2000) };
    for (const result of [stored, odd, noFiles]) {
      const jobId = await jobWithResult(ctx, t, result);
      for (let i = 0; i < 3; i++) {
        ctx.clock.advance(1_000);
        const signingTime = ctx.clock.now();
        const expected = Buffer.from(JSON.stringify(await presentResult(ctx.deps, scopeOf(t), typeof result === 'string' ? JSON.parse(result) : result, signingTime)), 'utf8');
        assert.ok((await readAll(ctx, t, jobId)).equals(expected), `read ${i}`);
      }
    }
  });
}, testKeySuite());
