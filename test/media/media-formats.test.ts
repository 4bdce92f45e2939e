/**
 * The content checks of uploads (inspect.ts) on real files made here: every accepted format
 * passes with its declared type, and every hostile variant is refused with its reason. No
 * database: these are the rules the upload route applies before anything is stored.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspectUpload } from '../../src/modules/media/inspect.js';
import { sanitizeFileName } from '../../src/modules/media/formats.js';
import { parseRange } from '../../src/modules/media/download-route.js';
import { isAppError } from '../../src/http/errors.js';
import * as files from '../support/media.js';

const dir = mkdtempSync(join(tmpdir(), 'was-media-formats-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

async function inspectBytes(bytes: Buffer, declared: string) {
  const path = join(dir, `f${counter++}`);
  writeFileSync(path, bytes);
  return inspectUpload(path, declared);
}

async function refusal(bytes: Buffer, declared: string): Promise<string> {
  try {
    await inspectBytes(bytes, declared);
  } catch (err) {
    assert.ok(isAppError(err), String(err));
    assert.equal(err.code, 'UNSUPPORTED_MEDIA');
    assert.equal(err.status, 400);
    return String(err.details?.reason);
  }
  assert.fail(`accepted as ${declared}`);
}

const hasFfmpeg = spawnSync('ffmpeg', ['-version']).status === 0;

describe('media content checks: accepted formats', () => {
  const cases: [string, () => Promise<Buffer> | Buffer, string, string][] = [
    ['PNG', () => files.png(), 'image/png', 'image/png'],
    ['JPEG', () => files.jpeg(), 'image/jpeg', 'image/jpeg'],
    ['JPEG declared with the image/jpg alias', () => files.jpeg(), 'image/jpg', 'image/jpeg'],
    ['WebP', () => files.webp(), 'image/webp', 'image/webp'],
    ['GIF', () => files.gif(), 'image/gif', 'image/gif'],
    ['WAV', () => files.wav(), 'audio/wav', 'audio/wav'],
    ['WAV declared as audio/x-wav', () => files.wav(), 'audio/x-wav', 'audio/wav'],
    ['MP3 with an ID3 tag', () => files.mp3(), 'audio/mpeg', 'audio/mpeg'],
    ['Ogg Vorbis', () => files.ogg(), 'audio/ogg', 'audio/ogg'],
    ['MP4', () => files.mp4(), 'video/mp4', 'video/mp4'],
    ['WebM', () => files.webm(), 'video/webm', 'video/webm'],
    ['GLB', () => files.glb(), 'model/gltf-binary', 'model/gltf-binary'],
  ];
  for (const [name, make, declared, stored] of cases) {
    test(`accepts ${name} (stored as ${stored})`, async () => {
      const result = await inspectBytes(await make(), declared);
      assert.equal(result.format.mimeType, stored);
    });
  }

  test('accepts a declared type with parameters and in upper case', async () => {
    assert.equal((await inspectBytes(await files.png(), 'Image/PNG; charset=binary')).format.mimeType, 'image/png');
  });

  test('probes image dimensions from the header', async () => {
    const result = await inspectBytes(await files.png(40, 30), 'image/png');
    assert.deepEqual([result.width, result.height], [40, 30]);
  });

  test('a real MP4 and WebM made by ffmpeg pass (skipped without ffmpeg)', { skip: !hasFfmpeg && 'ffmpeg is not installed' }, async () => {
    for (const [ext, declared, args] of [
      ['mp4', 'video/mp4', ['-c:v', 'libx264', '-pix_fmt', 'yuv420p']],
      ['webm', 'video/webm', ['-c:v', 'libvpx', '-b:v', '100k']],
    ] as const) {
      const out = join(dir, `ffmpeg.${ext}`);
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x64:rate=10', ...args, out]);
      assert.equal((await inspectUpload(out, declared)).format.mimeType, declared);
      const bytes = readFileSync(out);
      assert.equal(await refusal(bytes.subarray(0, Math.floor(bytes.length * 0.7)), declared), 'MALFORMED', `truncated ${ext}`);
    }
  });

  test('real MP3 and Ogg audio made by ffmpeg pass (skipped without ffmpeg)', { skip: !hasFfmpeg && 'ffmpeg is not installed' }, async () => {
    for (const [ext, declared, args] of [
      ['mp3', 'audio/mpeg', ['-c:a', 'libmp3lame', '-b:a', '64k']],
      ['ogg', 'audio/ogg', ['-c:a', 'libvorbis']],
      ['opus', 'audio/ogg', ['-c:a', 'libopus']],
    ] as const) {
      const out = join(dir, `ffmpeg.${ext}`);
      const probe = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', ...args, out]);
      if (probe.status !== 0) continue; // this ffmpeg build lacks the encoder
      assert.equal((await inspectUpload(out, declared)).format.mimeType, declared, ext);
    }
  });
});

describe('media content checks: refusals', () => {
  test('zero bytes are refused (EMPTY)', async () => {
    assert.equal(await refusal(Buffer.alloc(0), 'image/png'), 'EMPTY');
  });

  test('content that does not match the declared type is refused (TYPE_MISMATCH)', async () => {
    assert.equal(await refusal(await files.png(), 'image/jpeg'), 'TYPE_MISMATCH');
    assert.equal(await refusal(files.wav(), 'audio/mpeg'), 'TYPE_MISMATCH');
    assert.equal(await refusal(await files.png(), 'application/octet-stream'), 'TYPE_MISMATCH');
    assert.equal(await refusal(files.glb(), ''), 'TYPE_MISMATCH');
  });

  test('truncated files are refused (MALFORMED)', async () => {
    const cut = (b: Buffer, f = 0.6) => b.subarray(0, Math.floor(b.length * f));
    assert.equal(await refusal(cut(await files.png(64, 64)), 'image/png'), 'MALFORMED');
    assert.equal(await refusal(cut(await files.jpeg(64, 64)), 'image/jpeg'), 'MALFORMED');
    assert.equal(await refusal(cut(await files.webp(64, 64)), 'image/webp'), 'MALFORMED');
    assert.equal(await refusal(cut(await files.gif(64, 64)), 'image/gif'), 'MALFORMED');
    assert.equal(await refusal(cut(files.wav()), 'audio/wav'), 'MALFORMED');
    assert.equal(await refusal(cut(files.mp3(), 0.5), 'audio/mpeg'), 'MALFORMED');
    assert.equal(await refusal(cut(files.ogg()), 'audio/ogg'), 'MALFORMED');
    assert.equal(await refusal(cut(files.mp4(), 0.8), 'video/mp4'), 'MALFORMED');
    assert.equal(await refusal(cut(files.webm(), 0.8), 'video/webm'), 'MALFORMED');
    assert.equal(await refusal(cut(files.glb(), 0.9), 'model/gltf-binary'), 'MALFORMED');
  });

  test('polyglots with a payload appended after the end marker are refused (TRAILING_DATA)', async () => {
    const zip = files.zipArchive();
    const html = Buffer.from('<html><body>hi</body></html>');
    assert.equal(await refusal(Buffer.concat([await files.png(), zip]), 'image/png'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([await files.jpeg(), zip]), 'image/jpeg'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([await files.gif(), html]), 'image/gif'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([files.glb(), zip]), 'model/gltf-binary'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([files.mp3(), zip]), 'audio/mpeg'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([files.ogg(), zip]), 'audio/ogg'), 'TRAILING_DATA');
    assert.equal(await refusal(Buffer.concat([files.webm(), zip]), 'video/webm'), 'TRAILING_DATA');
  });

  test('a JPEG/HTML polyglot with a script in its comment segment is refused (EMBEDDED_MARKUP)', async () => {
    const polyglot = files.withJpegComment(await files.jpeg(), '*/=1;<script>alert(document.cookie)</script>/*');
    assert.equal(await refusal(polyglot, 'image/jpeg'), 'EMBEDDED_MARKUP');
  });

  test('SVG is refused whatever it is declared as (SVG_NOT_ALLOWED)', async () => {
    assert.equal(await refusal(files.SVG, 'image/svg+xml'), 'SVG_NOT_ALLOWED');
    assert.equal(await refusal(files.SVG, 'image/png'), 'SVG_NOT_ALLOWED');
    assert.equal(await refusal(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('  <svg onload="alert(1)"></svg>')]), 'image/gif'), 'SVG_NOT_ALLOWED');
  });

  test('executables and scripts are refused (EXECUTABLE)', async () => {
    assert.equal(await refusal(files.ELF, 'image/png'), 'EXECUTABLE');
    assert.equal(await refusal(files.ELF, 'application/octet-stream'), 'EXECUTABLE');
    assert.equal(await refusal(files.SHELL_SCRIPT, 'image/png'), 'EXECUTABLE');
    assert.equal(await refusal(Buffer.concat([Buffer.from('MZ'), Buffer.alloc(200)]), 'image/png'), 'EXECUTABLE');
  });

  test('types outside the accepted list are refused (TYPE_NOT_ALLOWED)', async () => {
    assert.equal(await refusal(files.zipArchive(), 'application/zip'), 'TYPE_NOT_ALLOWED');
    assert.equal(await refusal(Buffer.from('just some text\n'), 'text/plain'), 'TYPE_NOT_ALLOWED');
    assert.equal(await refusal(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n', 'latin1'), 'application/pdf'), 'TYPE_NOT_ALLOWED');
    const tiff = await (await import('sharp')).default({ create: { width: 4, height: 4, channels: 3, background: '#fff' } }).tiff().toBuffer();
    assert.equal(await refusal(tiff, 'image/tiff'), 'TYPE_NOT_ALLOWED');
  });

  test('a decompression bomb is refused from its header, without decoding (PIXEL_LIMIT)', async () => {
    const bomb = files.pixelBombPng(20_000);
    assert.ok(bomb.length < 100_000, `the bomb is small (${bomb.length} bytes) but declares 400 megapixels`);
    assert.equal(await refusal(bomb, 'image/png'), 'PIXEL_LIMIT');
    // Without decoding: the same header over pixel data that cannot be decoded (a corrupt IDAT)
    // gets the same refusal. A check that decoded first would fail on the corrupt data instead.
    // (The outcome proves it; no stopwatch races a loaded machine.)
    const undecodable = files.withCorruptIdat(bomb);
    assert.equal(await refusal(undecodable, 'image/png'), 'PIXEL_LIMIT');
  });

  test('pixel data made undecodable by withCorruptIdat does not decode (what the pixel-bomb test relies on)', async () => {
    const sharp = (await import('sharp')).default;
    await sharp(files.pixelBombPng(64)).raw().toBuffer(); // the intact image decodes
    await assert.rejects(sharp(files.withCorruptIdat(files.pixelBombPng(64))).raw().toBuffer());
  });

  test('an image just within the pixel bound passes', async () => {
    const ok = files.pixelBombPng(7000); // 49 megapixels
    assert.equal((await inspectBytes(ok, 'image/png')).format.mimeType, 'image/png');
  });
});

describe('media names and ranges', () => {
  test('name: the uploaded filename stripped of any path and control characters', () => {
    assert.equal(sanitizeFileName('../../etc/passwd', 'png'), 'passwd');
    assert.equal(sanitizeFileName('C:\\Users\\me\\photo.png', 'png'), 'photo.png');
    assert.equal(sanitizeFileName('re\u0000port\u0007\u001b[31m.png', 'png'), 'report[31m.png');
    assert.equal(sanitizeFileName('evil\u202egnp.exe', 'png'), 'evilgnp.exe');
    assert.equal(sanitizeFileName('line\r\nbreak.wav', 'wav'), 'linebreak.wav');
    assert.equal(sanitizeFileName('photo\u0085 one.jpg', 'jpg'), 'photo one.jpg');
    assert.equal(sanitizeFileName('../', 'png'), 'media.png');
    assert.equal(sanitizeFileName('..', 'png'), 'media.png');
    assert.equal(sanitizeFileName(undefined, 'glb'), 'media.glb');
    assert.equal(sanitizeFileName('été – 夏.png', 'png'), 'été – 夏.png');
    const long = sanitizeFileName(`${'a'.repeat(400)}.png`, 'png');
    assert.equal(long.length, 255);
    assert.ok(long.endsWith('.png'));
  });

  test('range: single byte ranges, suffixes, open ends and unsatisfiable ones', () => {
    assert.equal(parseRange(undefined, 100), undefined);
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
    assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
    assert.deepEqual(parseRange('bytes=50-1000', 100), { start: 50, end: 99 });
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=9-3', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-1,5-9', 100), undefined, 'multiple ranges: whole body');
    assert.equal(parseRange('items=0-1', 100), undefined, 'other units: whole body');
  });
});
