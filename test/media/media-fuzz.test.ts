/**
 * Property tests of POST /v1/media/upload against hostile uploads (spec Rule 7, Rule 8 and Errors;
 * decisions.md section 1 "a media item's name" and section 3; docs/operations.md "Media limits").
 * Bodies are built byte by byte here (not with FormData), so the multipart framing, the part
 * headers and the filename encodings can be anything a client could send; the MCP tool
 * service_media_upload, which posts to the same endpoint, gets the same contents in
 * test/media/media-mcp-fuzz.test.ts. The samples, bodies, generators and checks are in
 * test/support/ (media-samples.ts, multipart.ts, media-upload-arbitraries.ts,
 * media-upload-checks.ts).
 *
 * Inputs: random bytes, random bytes behind the magic bytes of accepted and refused formats, real
 * files (PNG, JPEG, WebP, GIF through sharp; WAV, MP3, Ogg, MP4, WebM, GLB written byte by byte)
 * unmodified, with byte flips, truncated, with junk appended or a slice cut out; declared part
 * types that disagree with the bytes; hostile filenames (path traversal, absolute and UNC paths,
 * C0/C1 controls, NUL, line breaks, bidi and zero-width marks, unicode, very long, empty) sent as a
 * quoted parameter and as RFC 5987 `filename*`; bodies that do not hold exactly one file part named
 * `file` (none, two, extra fields, parts without or with a foreign Content-Disposition), broken
 * framing (other boundary, missing or truncated closing delimiter, body cut short, LF-only lines),
 * wrong top-level Content-Types; and files a few bytes around the plan's largest upload, with and
 * without a Content-Length.
 *
 * Promises checked on every request:
 * - never a 5xx; every refusal is the error envelope `{success:false, code, message, requestId}`
 *   with a code of ERROR_REGISTRY and that code's registered status (UNSUPPORTED_MEDIA 400,
 *   INVALID_REQUEST 400, PAYLOAD_TOO_LARGE 413 ...), and the code the case calls for;
 * - a refusal leaves no partial write: no media row, no event row, no change in used bytes, and
 *   not one file added or removed anywhere under DATA_DIR/media. Uploads never touch the blob pool
 *   (src/modules/media/blob-pool.ts: only job results, written with putBytes, are hard links to
 *   DATA_DIR/media/.pool/<sha256>; an upload is staged in DATA_DIR/media/.staging and renamed to
 *   DATA_DIR/media/<workspaceId>/<mediaId> by LocalBlobStore.putFile), and every staged file is
 *   removed by the request that made it, so nothing at all may stay: not in .staging, not in .pool,
 *   not under the workspace. (Only an empty <workspaceId> directory could remain, if the quota
 *   re-check inside the insert transaction refused an upload after its blob was committed; the
 *   comparison is of files, and no case here reaches that path.);
 * - an accepted upload adds exactly one row, one `media.created` event holding the item, and one
 *   file, `<workspaceId>/<mediaId>`; its mimeType is the canonical type of the declared one, its
 *   sha256 and sizeBytes are those of the bytes sent, its name is the part's filename stripped of
 *   any path and control characters, GET /v1/media/{id} returns the same item, and the signed URL
 *   of GET /v1/media/{id}/download serves exactly the bytes sent.
 *
 * Found here and fixed: a part without a form-data Content-Disposition rode along with the file
 * unseen (stored, not 400), and a body cut short inside the file could leave its staging file
 * behind (a race; both src/modules/media/upload-receiver.ts); the MCP tool rewrote `\`, `"`, CR
 * and LF in its name to `_`, so a backslash path was kept (src/mcp/routes.ts). A filename holding
 * CR or LF is refused (the multipart parser skips such a part; docs/decisions.md, "Media names").
 *
 * MEDIA_FUZZ_RUNS (default 100) scales every property and MEDIA_FUZZ_SEED replays a run; the
 * default keeps the file well under a minute per database.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { MEDIA_PLAN_LIMITS, MULTIPART_OVERHEAD_BYTES } from '../../src/modules/media/limits.js';
import { describeEachDatabase } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { wavHeader } from '../support/wav.js';
import { APPENDED_PAYLOADS, REFS } from '../support/media-samples.js';
import { dispositionHeader, encodeMultipart, FALLBACK_FILENAME, filePart, newBoundary, type FilenameEncoding, type HeaderLine } from '../support/multipart.js';
import { bare, bump, CANONICAL_OF_DECLARED, checkOutcome, LATE_OPEN_MS, params, RUNS, send, SIZE_RUNS, snapshot, uploadOne, type Sent } from '../support/media-upload-checks.js';
import { buildStructureCase, bytesArb, chunksOf, contentArb, declaredArb, describeStructure, encodingArb, filenameArb, LINE_BREAK, refArb, structureArb } from '../support/media-upload-arbitraries.js';
import { checkRefusals } from '../support/openapi-responses.js';

// ---------------------------------------------------------------------------------------------

describeEachDatabase('media upload fuzz', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test(`Rule 7 (${RUNS} runs): random, corrupted, truncated and padded files with any declared type: never a 5xx, refusals are 400 UNSUPPORTED_MEDIA leaving nothing, acceptances store exactly the bytes`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        contentArb.chain((content) => fc.tuple(fc.constant(content), declaredArb(content))),
        async ([content, declared]) => {
          const ref = 'ref' in content ? content.ref : undefined;
          const filename = `upload.${ref?.ext ?? 'bin'}`;
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(content.bytes, declared, filename));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: content.bytes, declared, filename });
          bump(stats, `${content.kind}:${outcome}`);
          if (outcome === 'stored') return;
          // Any refusal of a file part named file is about its content.
          assert.equal(outcome, 'UNSUPPORTED_MEDIA', `a file part is refused for its content: ${res.body}`);
          const reason = res.json().details.reason;
          const declaredFormat = CANONICAL_OF_DECLARED.get(bare(declared));
          if (content.kind === 'empty') assert.equal(reason, 'EMPTY');
          if (content.kind === 'original') {
            // A real file is refused only when the declared type names another format.
            assert.notEqual(declaredFormat?.id, content.ref.id, `a real ${content.ref.id} declared as ${declared} is accepted: ${res.body}`);
            assert.equal(reason, 'TYPE_MISMATCH', res.body);
          }
        },
      ),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok(Object.keys(stats).some((k) => k.endsWith(':stored')) && Object.keys(stats).some((k) => k.endsWith(':UNSUPPORTED_MEDIA')), JSON.stringify(stats));
  });

  test(`Rule 7 (${RUNS} runs): a truncated real file, or one with anything appended, is never stored where the container fixes its end`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    const exact = REFS.filter((r) => r.truncationRefused);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...exact).chain((ref) => {
          const truncated = fc.integer({ min: 1, max: ref.bytes.length - 1 }).map((n) => ({ ref, how: 'truncated', bytes: ref.bytes.subarray(0, n) }));
          if (!ref.appendRefused) return truncated;
          const appended = fc
            .oneof(bytesArb(256).filter((b) => b.length > 0), fc.constantFrom(...APPENDED_PAYLOADS), fc.constant(ref.bytes))
            .map((junk) => ({ ref, how: 'appended', bytes: Buffer.concat([ref.bytes, junk]) }));
          return fc.oneof(truncated, appended);
        }),
        async ({ ref, how, bytes }) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(bytes, ref.type, `cut.${ref.ext}`));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes, declared: ref.type, filename: `cut.${ref.ext}` });
          bump(stats, `${ref.id}:${how}:${outcome}`);
          assert.equal(outcome, 'UNSUPPORTED_MEDIA', `${how} ${ref.id} (${bytes.length} of ${ref.bytes.length} bytes): ${res.body}`);
        },
      ),
      params(RUNS),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`decisions.md 1 (${RUNS} runs): a stored item's name is the part's filename stripped of any path and control characters, however the filename is encoded`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        refArb,
        // Filenames with a line break: the next test (a known defect).
        filenameArb.filter((f) => !LINE_BREAK.test(f)).chain((filename) => fc.tuple(fc.constant(filename), encodingArb(filename))),
        async (ref, [filename, encoding]) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(ref.bytes, ref.type, filename, encoding));
          const sent: Sent = { bytes: ref.bytes, declared: ref.type, filename, ...(encoding === 'both' ? { otherFilename: FALLBACK_FILENAME } : {}) };
          const outcome = await checkOutcome(ctx, tenant, before, res, sent);
          bump(stats, `${encoding}:${outcome}`);
          assert.equal(outcome, 'stored', `a valid ${ref.id} with filename ${JSON.stringify(filename)} (${encoding}) is stored: ${res.body}`);
        },
      ),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  // @fastify/busboy skips a part whose filename holds a CR or LF (`hasBareLineBreak` in
  // lib/types/multipart.js), before anything can see it; such a name can only be sent as an RFC 5987
  // `filename*`. Such an upload is refused, documented in docs/decisions.md ("Media names"): 400
  // INVALID_REQUEST, whose message names the cause, and nothing is stored.
  test(`decisions.md 1 (${Math.ceil(RUNS / 4)} runs): a filename with a line break is refused with 400 INVALID_REQUEST and leaves nothing`, async () => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    await fc.assert(
      fc.asyncProperty(
        refArb,
        fc.tuple(filenameArb, fc.constantFrom('\r', '\n', '\r\n'), filenameArb).map(([a, br, b]) => `${a}${br}${b}`),
        fc.constantFrom<FilenameEncoding>('ext-utf8', 'ext-latin1'),
        async (ref, filename, encoding) => {
          const enc = encoding === 'ext-latin1' && [...filename].some((c) => c.codePointAt(0)! > 0xff) ? 'ext-utf8' : encoding;
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(ref.bytes, ref.type, filename, enc));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: ref.bytes, declared: ref.type, filename });
          assert.equal(outcome, 'INVALID_REQUEST', `a filename with a line break (${JSON.stringify(filename)}, ${enc}) is refused: ${res.body}`);
          assert.match(res.json().message, /line break/);
        },
      ),
      params(Math.ceil(RUNS / 4)),
    );
  });

  test(`Rule 7 (${RUNS} runs): not exactly one file part named file, broken framing or a wrong Content-Type is 400 INVALID_REQUEST and leaves nothing; a well-formed single file part is stored`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(structureArb, async (c) => {
        const { body, contentType, sent, expected } = buildStructureCase(c);
        const before = await snapshot(ctx, tenant.workspace.id);
        const res = await send(ctx, tenant, body, contentType);
        const outcome = await checkOutcome(ctx, tenant, before, res, expected === 'stored' ? sent : undefined);
        bump(stats, `${expected}:${outcome}`);
        assert.equal(outcome, expected, `${describeStructure(c)}: ${res.body}`);
      }),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok(stats['stored:stored'] && stats['INVALID_REQUEST:INVALID_REQUEST'], JSON.stringify(stats));

    // Part headers past the multipart parser's bounds (80 KiB of header, 64 header lines): what
    // does not fit is dropped, here the part's Content-Type, so the file is refused as declared
    // text/plain (a misleading reason, but a refusal). Storing it whole would be right as well;
    // either way: no 5xx, and nothing left behind by a refusal.
    const oversized: [string, HeaderLine[]][] = [
      [`${'a'.repeat(90_000)}.png`, [dispositionHeader('file', `${'a'.repeat(90_000)}.png`), 'Content-Type: image/png']],
      ['x.png', [dispositionHeader('file', 'x.png'), ...Array.from({ length: 70 }, (_, i) => `X-Pad-${i}: v`), 'Content-Type: image/png']],
    ];
    for (const [filename, headers] of oversized) {
      const before = await snapshot(ctx, tenant.workspace.id);
      const res = await uploadOne(ctx, tenant, { headers, body: REFS[0]!.bytes });
      const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: REFS[0]!.bytes, declared: 'image/png', filename });
      assert.ok(['stored', 'INVALID_REQUEST', 'UNSUPPORTED_MEDIA'].includes(outcome), res.body);
    }
  });

  // Found by the property above (rarely: it is a race, about once in a thousand cut bodies under
  // the test runner): a body cut short inside the file's bytes left `.staging/<id>.part` behind.
  // The staged file was removed as soon as the pipeline failed, while its write stream was still
  // opening (creating) it on the thread pool; the open then created the file after the removal.
  // Fixed in src/modules/media/upload-receiver.ts (wait for the stream to close, then remove).
  // Here every open of a staging file is made late, which forces the race on every request.
  test(`Rule 7 (${RUNS} runs): a body cut short inside the file part is 400 INVALID_REQUEST and leaves no staged file, also when the staging file opens late`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stagingDir = join(ctx.dataDir, 'media', '.staging');
    const stats: Record<string, number> = {};
    const open = fs.open;
    // fs.WriteStream opens its file through the fs module's `open` at the time it opens.
    (fs as { open: unknown }).open = (...args: unknown[]) => {
      const late = typeof args[0] === 'string' && args[0].startsWith(stagingDir);
      if (!late) return (open as (...a: unknown[]) => void)(...args);
      setTimeout(() => (open as (...a: unknown[]) => void)(...args), LATE_OPEN_MS);
    };
    try {
      await fc.assert(
        fc.asyncProperty(refArb, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), async (ref, at) => {
          const boundary = newBoundary();
          const body = encodeMultipart([filePart(ref.bytes, ref.type, `cut.${ref.ext}`)], boundary);
          const dataStart = body.indexOf('\r\n\r\n') + 4;
          const dataEnd = body.lastIndexOf(`\r\n--${boundary}--`);
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await send(ctx, tenant, body.subarray(0, dataStart + Math.floor(at * (dataEnd - dataStart))), `multipart/form-data; boundary=${boundary}`);
          // A file whose open was still pending when the answer went out would appear by now.
          await new Promise((resolve) => setTimeout(resolve, 2 * LATE_OPEN_MS));
          const outcome = await checkOutcome(ctx, tenant, before, res, undefined);
          bump(stats, outcome);
          assert.equal(outcome, 'INVALID_REQUEST', res.body);
        }),
        params(RUNS),
      );
    } finally {
      (fs as { open: unknown }).open = open;
    }
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`operations.md media limits (${SIZE_RUNS} runs): a file of at most the plan's largest upload is stored whole, one byte more is 413 PAYLOAD_TOO_LARGE and leaves nothing, with or without a Content-Length`, async (t) => {
    const ctx = get();
    const max = MEDIA_PLAN_LIMITS.free.maxUploadBytes;
    const filler = Buffer.alloc(max + 2 * 1024 * 1024);
    for (let i = 0; i < filler.length; i += 4) filler.writeUInt32LE((i * 2654435761) >>> 0, i);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-MULTIPART_OVERHEAD_BYTES, MULTIPART_OVERHEAD_BYTES, MULTIPART_OVERHEAD_BYTES + 1, 1024 * 1024)),
        fc.constantFrom<'length' | 'chunked'>('length', 'chunked'),
        async (delta, transport) => {
          // A fresh free workspace each time (its quota is not what is tested), its blob removed after.
          const tenant = await seedTenant(ctx.deps, { plan: 'free' });
          const size = max + delta;
          const bytes = Buffer.concat([wavHeader(size - 44), filler.subarray(0, size - 44)]);
          const boundary = newBoundary();
          const body = encodeMultipart([filePart(bytes, 'audio/wav', 'edge.wav')], boundary);
          const before = await snapshot(ctx, tenant.workspace.id);
          const res =
            transport === 'length'
              ? await send(ctx, tenant, body, `multipart/form-data; boundary=${boundary}`)
              : await send(ctx, tenant, Readable.from(chunksOf(body, 256 * 1024)), `multipart/form-data; boundary=${boundary}`, { 'transfer-encoding': 'chunked' });
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes, declared: 'audio/wav', filename: 'edge.wav' });
          bump(stats, `${delta > 0 ? 'over' : 'within'}:${transport}:${outcome}`);
          assert.equal(outcome, size <= max ? 'stored' : 'PAYLOAD_TOO_LARGE', `${size} bytes (max ${max}) sent ${transport}: ${res.body}`);
          if (outcome === 'stored') await ctx.deps.blobs.delete(`${tenant.workspace.id}/${res.json().data.id}`);
        },
      ),
      {
        ...params(SIZE_RUNS),
        examples: [
          [0, 'length'],
          [1, 'length'],
          [0, 'chunked'],
          [1, 'chunked'],
        ],
      },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);

    // A Content-Length over the maximum plus the multipart allowance is refused before the body is read.
    const tenant = await seedTenant(ctx.deps, { plan: 'free' });
    const boundary = newBoundary();
    const body = encodeMultipart([filePart(REFS[0]!.bytes, 'image/png', 'small.png')], boundary);
    for (const declared of [String(max + MULTIPART_OVERHEAD_BYTES + 1), String(2 ** 53), `1${'0'.repeat(30)}`]) {
      const before = await snapshot(ctx, tenant.workspace.id);
      const res = await send(ctx, tenant, body, `multipart/form-data; boundary=${boundary}`, { 'content-length': declared });
      assert.equal(await checkOutcome(ctx, tenant, before, res, undefined), 'PAYLOAD_TOO_LARGE', `Content-Length ${declared}: ${res.body}`);
    }
  });
});
