/**
 * Uploads stream to storage: a 100 MB file sent over a real socket is stored with the right size
 * and SHA-256 while the process's resident memory grows by less than 60 MB, on every database
 * and both storage backends; the signed URL then streams it back byte for byte. Prints the
 * measured upload and download rates.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { backendOptions, startTestS3, upload, wav, wavHeader, type BackendName } from '../support/media.js';

const s3 = await startTestS3();
after(() => s3.close());

const FILE_BYTES = 100 * 1024 * 1024;
const RSS_BOUND = 60 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024);
for (let i = 0; i < CHUNK.length; i++) CHUNK[i] = (i * 2654435761) >>> 24;

interface Sent {
  status: number;
  body: any;
  sha256: string;
  seconds: number;
  peakRssGrowth: number;
}

/** Streams a FILE_BYTES WAV as the `file` part, one reused 64 KiB buffer at a time, measuring RSS. */
async function streamUpload(port: number, t: Tenant): Promise<Sent> {
  const boundary = 'stream-boundary-7f3a';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const header = wavHeader(FILE_BYTES - 44);
  const hash = createHash('sha256');
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const started = performance.now();
  try {
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/media/upload',
          headers: {
            authorization: `Bearer ${t.secret}`,
            'x-service-workspace': t.workspace.id,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(head.length + FILE_BYTES + tail.length),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      const write = (b: Buffer) => (req.write(b) ? Promise.resolve() : new Promise<void>((r) => req.once('drain', () => r())));
      (async () => {
        await write(head);
        await write(header);
        hash.update(header);
        let left = FILE_BYTES - header.length;
        while (left > 0) {
          const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
          hash.update(piece);
          await write(piece);
          left -= piece.length;
        }
        req.end(tail);
      })().catch(reject);
    });
    const { status, text } = await response;
    return { status, body: JSON.parse(text), sha256: hash.digest('hex'), seconds: (performance.now() - started) / 1000, peakRssGrowth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

async function streamDownload(url: string): Promise<{ sha256: string; bytes: number; seconds: number; contentType: string | null }> {
  const started = performance.now();
  const res = await fetch(url);
  assert.equal(res.status, 200);
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes, seconds: (performance.now() - started) / 1000, contentType: res.headers.get('content-type') };
}

async function listen(ctx: TestContext): Promise<number> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return (ctx.app.server.address() as AddressInfo).port;
}

const mb = (n: number) => (n / (1024 * 1024)).toFixed(1);

function streamingSuite(backend: BackendName) {
  describeEachDatabase(
    `media streaming [${backend}]`,
    (get) => {
      test('a 100 MB upload over a real socket streams to storage with RSS growth under 60 MB, and downloads back byte for byte', async (t) => {
        const ctx = get();
        const tenant = await seedTenant(ctx.deps);
        const port = await listen(ctx);
        // Warm up (module loading, first allocations) so the measurement is about streaming.
        assert.equal((await upload(ctx, tenant, wav(), { type: 'audio/wav', filename: 'warm.wav' })).statusCode, 200);
        const sent = await streamUpload(port, tenant);
        assert.equal(sent.status, 200, JSON.stringify(sent.body));
        assert.equal(sent.body.data.sizeBytes, FILE_BYTES);
        assert.equal(sent.body.data.sha256, sent.sha256);
        assert.ok(sent.peakRssGrowth < RSS_BOUND, `RSS grew by ${mb(sent.peakRssGrowth)} MB during the upload`);
        assert.deepEqual(await ctx.deps.blobs.stagedFiles(), [], 'the staging file is gone');

        const link = await call(ctx, 'GET', `/v1/media/${sent.body.data.id}/download`, { secret: tenant.secret, workspaceId: tenant.workspace.id });
        const url = new URL(link.json().data.url);
        // Local URLs carry PUBLIC_BASE_URL; this test's server listens on an ephemeral port instead.
        const target = backend === 'local' ? `http://127.0.0.1:${port}${url.pathname}${url.search}` : url.toString();
        const got = await streamDownload(target);
        assert.equal(got.bytes, FILE_BYTES);
        assert.equal(got.sha256, sent.sha256);
        assert.equal(got.contentType, 'audio/wav');
        t.diagnostic(
          `${backend}/${ctx.dbName}: upload ${mb(FILE_BYTES / sent.seconds)} MB/s (RSS +${mb(sent.peakRssGrowth)} MB), download ${mb(FILE_BYTES / got.seconds)} MB/s`,
        );
      });
    },
    backendOptions(backend, s3),
  );
}

streamingSuite('local');
streamingSuite('s3');
