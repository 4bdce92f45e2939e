/**
 * The SDK (packages/sdk) against the real service in this process, over a loopback socket: the
 * complete-output reader (16 MiB verified, restart on a changed result and on an expired cursor),
 * idempotent retries of runs after a dropped response, 429 back-off honouring Retry-After,
 * jobs.wait over SSE (with a Last-Event-ID resume) and by polling, list iterators, uploads, and
 * typed errors. Fault injection goes through the client's `fetch` option; the service is real.
 * On SQLite, and PostgreSQL with TEST_DATABASE_URL (test/support/sdk.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { admin, type TestContext, testKeySuite } from '../support/harness.js';
import { describeSdkDatabases } from '../support/sdk.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { drain } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { png } from '../support/media.js';
import { createClient as createCoreClient, ConnectionError, IntegrityError, ServiceError, type Job } from '../../packages/sdk/src/index.js';
import { createClient } from '../../packages/sdk/src/node.js';
import { waitUntil } from '../support/wait.js';

type FetchFn = typeof fetch;

async function sdkFor(ctx: TestContext, t: Tenant, options: { fetch?: FetchFn; maxRetryDelayMs?: number } = {}) {
  return createClient({ baseUrl: await baseUrl(ctx), apiKey: t.secret, workspaceId: t.workspace.id, retryBaseDelayMs: 20, ...options });
}

const urlOf = (input: Parameters<FetchFn>[0]) => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);

async function unlimited(ctx: TestContext, t: Tenant) {
  const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000 } });
  assert.equal(res.statusCode, 200, res.body);
}

/** A queued job whose result holds about `bytes` bytes of text, run to completion. */
async function bigJob(ctx: TestContext, t: Tenant, bytes: number): Promise<string> {
  const sdk = await sdkFor(ctx, t);
  const run = await sdk.runs.create('music.generate', { prompt: `big [sim:outputBytes=${bytes}]` });
  assert.equal(run.kind, 'job');
  await drain(ctx);
  if (run.kind !== 'job') throw new Error('unreachable');
  return run.jobId;
}

describeSdkDatabases('SDK against the service', (get) => {
  test('jobs.output reads a 16 MiB result page by page, verifies offsets and sha256, and parses it once', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    await unlimited(ctx, t);
    const bytes = 16 * 1024 * 1024 - 300 * 1024;
    const jobId = await bigJob(ctx, t, bytes);
    const sdk = await sdkFor(ctx, t);
    const doc = await sdk.jobs.outputDocument<{ text: string }>(jobId);
    assert.equal(Buffer.byteLength(doc.result.text), bytes);
    assert.ok(doc.totalBytes > bytes && doc.totalBytes <= 16 * 1024 * 1024);
    assert.equal(Buffer.byteLength(doc.text), doc.totalBytes);
    assert.equal(createHash('sha256').update(doc.text).digest('hex'), doc.sha256);
    assert.ok(doc.pages >= Math.ceil(doc.totalBytes / 8192));
    assert.equal(doc.restarts, 0);
  });

  test('the core client (WebCrypto hashing, no Node imports) reads and verifies the same way', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const jobId = await bigJob(ctx, t, 60_000);
    const core = createCoreClient({ baseUrl: await baseUrl(ctx), apiKey: t.secret, workspaceId: t.workspace.id });
    const result = await core.jobs.output<{ text: string }>(jobId);
    assert.equal(Buffer.byteLength(result.text), 60_000);
  });

  test('a result that changes during the read (409 OUTPUT_CHANGED) restarts it from the first page', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const jobId = await bigJob(ctx, t, 100_000);
    const replaced = JSON.stringify({ replaced: true, filler: 'é'.repeat(20_000) });
    let pages = 0;
    const cursors: (string | null)[] = [];
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        const url = new URL(urlOf(input));
        if (url.pathname.endsWith('/output')) {
          cursors.push(url.searchParams.get('cursor'));
          if (++pages === 4) {
            await ctx.deps.db.updateTable('jobs').set({ output_json: replaced, output_sha256: createHash('sha256').update(replaced).digest('hex') }).where('id', '=', jobId).execute();
          }
        }
        return fetch(input, init);
      },
    });
    const doc = await sdk.jobs.outputDocument<{ replaced?: boolean; filler?: string }>(jobId);
    assert.equal(doc.restarts, 1);
    assert.equal(doc.result.replaced, true);
    assert.equal(doc.result.filler?.length, 20_000);
    assert.equal(cursors[4], null, 'the read after the 409 started without a cursor');
  });

  test('an expired cursor (410 CURSOR_EXPIRED) restarts the read', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const jobId = await bigJob(ctx, t, 50_000);
    let pages = 0;
    const statuses: number[] = [];
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        if (new URL(urlOf(input)).pathname.endsWith('/output') && ++pages === 3) ctx.clock.advance(ctx.config.outputCursorTtlS * 1000 + 1000);
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    const doc = await sdk.jobs.outputDocument<{ text: string }>(jobId);
    assert.equal(doc.restarts, 1);
    assert.ok(statuses.includes(410), `a page answered 410: ${statuses.join(',')}`);
    assert.equal(Buffer.byteLength(doc.result.text), 50_000);
  });

  test('a corrupt page is refused (tampered in transit): an offsetBytes other than the bytes read so far, or a fragment whose bytes do not hash to sha256, is an IntegrityError; a digest that changes on every read gives up after maxRestarts', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const jobId = await bigJob(ctx, t, 50_000);
    /** A client whose output pages pass through `mutate(page, n)` (n counts pages from 1 over all reads). */
    const tampering = (mutate: (page: Record<string, any>, n: number) => void) => {
      let n = 0;
      return sdkFor(ctx, t, {
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          if (!new URL(urlOf(input)).pathname.endsWith('/output') || res.status !== 200) return res;
          const body = (await res.json()) as { data: Record<string, any> };
          mutate(body.data, ++n);
          return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', 'x-request-id': res.headers.get('x-request-id') ?? '' } });
        },
      });
    };
    const refusal = (work: Promise<unknown>) => work.then(() => assert.fail('a corrupt output was accepted'), (err: unknown) => err);

    const shifted = await refusal((await tampering((page, n) => n === 2 && (page.offsetBytes += 1))).jobs.output(jobId));
    assert.ok(shifted instanceof IntegrityError, String(shifted));
    assert.match(shifted.message, /offsetBytes/);
    assert.equal(shifted.actual, (shifted.expected as number) + 1, 'the page claimed one byte more than was read');

    // Same byte length, other bytes: offsets and total still add up, only the digest can tell.
    const altered = await refusal((await tampering((page, n) => n === 3 && (page.fragment = page.fragment.replace(/[a-z]/, (c: string) => c.toUpperCase())))).jobs.output(jobId));
    assert.ok(altered instanceof IntegrityError, String(altered));
    assert.match(altered.message, /SHA-256 of the joined output differs/);
    assert.notEqual(altered.expected, altered.actual);

    const shorter = await refusal((await tampering((page, n) => n === 2 && (page.fragment = page.fragment.slice(1)))).jobs.output(jobId));
    assert.ok(shorter instanceof IntegrityError, String(shorter));

    // A page naming another digest means the result changed: the read restarts, and gives up when it keeps changing.
    const fake = 'f'.repeat(64);
    const once = await (await tampering((page, n) => n === 2 && (page.sha256 = fake))).jobs.outputDocument<{ text: string }>(jobId);
    assert.equal(once.restarts, 1);
    assert.equal(Buffer.byteLength(once.result.text), 50_000);
    const always = await refusal((await tampering((page) => page.offsetBytes > 0 && (page.sha256 = fake))).jobs.outputDocument(jobId, { maxRestarts: 2 }));
    assert.ok(always instanceof IntegrityError, String(always));
    assert.match(always.message, /kept changing \(3 reads\)/);
  });

  test('runs.create retried after a dropped response returns the same job, created and charged once', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const keys: string[] = [];
    let dropped = 0;
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (new URL(urlOf(input)).pathname === '/v1/runs') {
          keys.push(new Headers(init?.headers).get('idempotency-key')!);
          if (dropped++ === 0) {
            await res.arrayBuffer(); // the service answered; the client never sees it
            throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
          }
        }
        return res;
      },
    });
    const run = await sdk.runs.create('image.generate', { prompt: 'a lighthouse' });
    assert.equal(run.kind, 'job');
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1], 'the retry carried the same Idempotency-Key');
    const jobs = await sdk.jobs.list({ limit: 100 });
    assert.equal(jobs.items.length, 1, 'one job exists');
    assert.equal(run.kind === 'job' && run.jobId, jobs.items[0]!.id);
    const balance = await sdk.balance.get();
    assert.equal(balance.reservedMillicents, run.kind === 'job' ? run.maximumCostMillicents : -1, 'reserved once');
  });

  test('a write without an Idempotency-Key is never sent twice: a dropped response is a ConnectionError', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const run = await (await sdkFor(ctx, t)).runs.create('image.generate', { prompt: 'x' });
    let sent = 0;
    const dropping = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        sent++;
        await res.arrayBuffer();
        throw new TypeError('fetch failed');
      },
    });
    await assert.rejects(dropping.jobs.cancel(run.kind === 'job' ? run.jobId : ''), ConnectionError);
    assert.equal(sent, 1, 'cancel (no Idempotency-Key) was sent once');
    sent = 0;
    await assert.rejects(dropping.jobs.get(run.kind === 'job' ? run.jobId : ''), ConnectionError);
    assert.equal(sent, 6, 'a read is retried (5 retries)');
  });

  test('429 with Retry-After: the client waits at least that long, then succeeds; a longer wait than allowed throws the typed error', async () => {
    const ctx = get();
    ctx.clock.set(Date.UTC(2026, 10, 18, 12, 40, 59, 0));
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 3 } })).statusCode, 200);
    const seen: { status: number; at: number; retryAfter: string | null }[] = [];
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push({ status: res.status, at: performance.now(), retryAfter: res.headers.get('retry-after') });
        // While the client waits, the service's (fake) clock moves on by the same time.
        if (res.status === 429) ctx.clock.advance(Number(res.headers.get('retry-after')) * 1000);
        return res;
      },
    });
    for (let i = 0; i < 3; i++) await sdk.usage.get();
    const strict = await sdkFor(ctx, t, { maxRetryDelayMs: 500 });
    const refused = await strict.usage.get().catch((err: unknown) => err);
    assert.ok(refused instanceof ServiceError, String(refused));
    assert.equal(refused.status, 429);
    assert.equal(refused.code, 'RATE_LIMITED');
    assert.equal(refused.retryAfter, 1);
    assert.ok(refused.requestId);
    assert.equal(refused.details?.limit, 'POINTS_MINUTE');
    const usage = await sdk.usage.get();
    assert.equal(usage.points.minuteUsed, 1, 'admitted in the next minute');
    const limited = seen.findIndex((s) => s.status === 429);
    assert.ok(limited >= 0);
    assert.equal(seen[limited]!.retryAfter, '1');
    assert.equal(seen[limited + 1]!.status, 200);
    assert.ok(seen[limited + 1]!.at - seen[limited]!.at >= 1000, 'waited Retry-After');
  });

  test('jobs.wait follows SSE on a Pro workspace and resumes a dropped stream with Last-Event-ID', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const streamRequests: (string | null)[] = [];
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!new URL(urlOf(input)).pathname.endsWith('/stream')) return res;
        streamRequests.push(new Headers(init?.headers).get('last-event-id'));
        if (streamRequests.length > 1 || !res.body) return res;
        // The first connection drops after its first frame.
        const reader = res.body.getReader();
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            let text = '';
            while (!text.includes('\n\n')) {
              const { value, done } = await reader.read();
              if (done) break;
              text += new TextDecoder().decode(value);
            }
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
            await reader.cancel();
          },
        });
        return new Response(body, { status: res.status, headers: res.headers });
      },
    });
    const run = await sdk.runs.create('image.generate', { prompt: 'x [sim:delay=20]' });
    assert.equal(run.kind, 'job');
    const seen: Job[] = [];
    const waiting = sdk.jobs.wait(run.kind === 'job' ? run.jobId : '', { onProgress: (j) => seen.push(j) });
    await waitUntil(() => streamRequests.length, (n) => n >= 2, 'the SDK to open the stream again', 60_000, 10);
    await drain(ctx);
    const job = await waiting;
    assert.equal(job.status, 'completed');
    assert.equal(seen[0]!.status, 'pending');
    assert.equal(streamRequests[0], null);
    assert.equal(streamRequests[1], String(seen[0]!.version), 'resumed after the last version seen');
    assert.equal(seen.at(-1)!.status, 'completed');
  });

  test('jobs.wait polls with back-off where the plan has no streams (403 PLAN_REQUIRED)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', plan: 'starter', credits: 1_000_000 });
    const paths: string[] = [];
    const sdk = await sdkFor(ctx, t, {
      fetch: async (input, init) => {
        paths.push(new URL(urlOf(input)).pathname);
        return fetch(input, init);
      },
    });
    const run = await sdk.runs.create('image.generate', { prompt: 'x' });
    const jobId = run.kind === 'job' ? run.jobId : '';
    const waiting = sdk.jobs.wait(jobId, { pollMinMs: 20, pollMaxMs: 50 });
    await waitUntil(() => paths, (p) => p.includes(`/v1/jobs/${jobId}`), 'the SDK to poll the job', 60_000, 10);
    await drain(ctx);
    const job = await waiting;
    assert.equal(job.status, 'completed');
    assert.equal(paths.filter((p) => p.endsWith('/stream')).length, 1, 'one stream attempt, then polling');
    // A completed job's output through the typed runs.complete helper of a synchronous-looking call.
    const result = await sdk.jobs.output<{ images: unknown[] }>(jobId);
    assert.ok(Array.isArray(result.images));
  });

  test('async iterators page through jobs and the event feed; typed errors carry code, status and requestId', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const sdk = await sdkFor(ctx, t);
    for (let i = 0; i < 3; i++) await sdk.runs.create('image.generate', { prompt: `n${i}` });
    await drain(ctx);
    const ids: string[] = [];
    for await (const job of sdk.jobs.iterate({ limit: 1 })) ids.push(job.id);
    assert.equal(new Set(ids).size, 3);
    // On PostgreSQL the feed shows an event once every transaction that began before its own has
    // ended, anywhere in the cluster (docs/decisions.md, "Event feed order is commit-safe"): other
    // tests' open transactions can hold it back a while, so the feed is read until it has them.
    const completedEvents = async () => {
      const list = [];
      for await (const e of sdk.events.iterate({ limit: 1, types: ['job.completed'] })) list.push(e);
      return list;
    };
    const events = await waitUntil(completedEvents, (list) => list.length >= 3, 'the three job.completed events in the feed', 60_000, 100);
    assert.equal(events.length, 3);
    assert.ok(events.every((e) => e.type === 'job.completed'));
    const err = await sdk.jobs.get('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, 'NOT_FOUND');
    assert.equal(err.status, 404);
    assert.match(err.requestId ?? '', /.+/);
    const invalid = await sdk.estimates.create('link.preview', { url: 'ftp://x' }).catch((e: unknown) => e);
    assert.ok(invalid instanceof ServiceError);
    assert.equal(invalid.code, 'INVALID_INPUT');
    assert.ok(invalid.details);
    const sync = await sdk.runs.complete('chat.generate', { messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(sync.status, 'completed');
    assert.ok(sync.result);
  });

  test('media.upload from a path, a Buffer, a Blob and a stream checks the returned sha256', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test' });
    const sdk = await sdkFor(ctx, t);
    const bytes = await png(8, 8);
    const digest = createHash('sha256').update(bytes).digest('hex');
    const dir = mkdtempSync(join(tmpdir(), 'was-sdk-upload-'));
    try {
      const path = join(dir, 'dot.png');
      writeFileSync(path, bytes);
      const fromPath = await sdk.media.upload(path);
      assert.equal(fromPath.name, 'dot.png');
      const fromBuffer = await sdk.media.upload(bytes, { name: 'b.png' });
      const fromBlob = await sdk.media.upload(new Blob([bytes], { type: 'image/png' }), { name: 'c.png' });
      const fromStream = await sdk.media.upload(Readable.from([bytes.subarray(0, 10), bytes.subarray(10)]), { name: 'd.png' });
      for (const item of [fromPath, fromBuffer, fromBlob, fromStream]) {
        assert.equal(item.sha256, digest);
        assert.equal(item.mimeType, 'image/png');
      }
      const listed = [];
      for await (const m of sdk.media.iterate({ limit: 2 })) listed.push(m.id);
      assert.equal(listed.length, 4);
      const signed = new URL((await sdk.media.downloadUrl(fromStream.id)).url);
      const url = new URL(`${signed.pathname}${signed.search}`, await baseUrl(ctx)); // PUBLIC_BASE_URL is not this test's port
      assert.equal(createHash('sha256').update(Buffer.from(await (await fetch(url)).arrayBuffer())).digest('hex'), digest);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}, testKeySuite());
