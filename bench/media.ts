/**
 * The media part of `npm run bench` (issue 4): upload and signed-download throughput of one
 * 50 MB file, each against a plain file copy of the same file on the same disk in the same run.
 *
 *   (m1) plain copy: the file streamed through userspace into a new file (read + write, as an
 *        upload must do; not copy_file_range, which can skip the copy entirely)
 *   (m1f) the same copy followed by an fsync, shown beside: an upload is made durable (fsync,
 *        rename) before it is acknowledged, and on a busy disk that flush is much of its time
 *   (m2) POST /v1/media/upload: multipart/form-data streamed over a real loopback socket, until
 *        the Media item comes back (sniffing, structure checks, SHA-256, storage, row)
 *   (m3) GET of the signed download URL, the body read to the end and counted
 *
 * The file is a valid 16-bit PCM WAV (a tone), so it passes every upload check. The rounds are
 * interleaved (m1 m2 m3, m1 m2 m3, …) and each ratio is the median of the per-round ratios, like
 * the request benches. There is no goal in the issue: the ratios are reported as they are.
 */
import { createReadStream, createWriteStream, openSync, closeSync, fsyncSync, writeSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { wavHeader } from '../test/support/wav.js';

export const MEDIA_FILE_BYTES = 50 * 1000 * 1000;

export interface MediaBenchInput {
  /** Base URL of the service (http://127.0.0.1:port). */
  base: string;
  /** A directory on the disk the service stores its media on (its DATA_DIR's parent is fine). */
  workDir: string;
  /** An API key and workspace with media:read and media:write, on a plan that allows 50 MB. */
  secret: string;
  workspaceId: string;
  rounds: number;
}

export interface MediaBenchSample {
  round: number;
  copyMBps: number;
  syncedCopyMBps: number;
  uploadMBps: number;
  downloadMBps: number;
}

export interface MediaBenchResult {
  fileBytes: number;
  samples: MediaBenchSample[];
  copyMBps: number;
  syncedCopyMBps: number;
  uploadMBps: number;
  downloadMBps: number;
  uploadRatio: number;
  downloadRatio: number;
}

/** Writes a WAV of `totalBytes` (header included): 8 kHz mono 16-bit, a 440 Hz tone. */
export function writeWav(path: string, totalBytes: number): void {
  const dataBytes = totalBytes - 44;
  const h = wavHeader(dataBytes);
  // One second of tone, repeated (8000 samples = 16000 bytes).
  const second = Buffer.alloc(16_000);
  for (let i = 0; i < 8000; i++) second.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / 8000) * 8000), i * 2);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, h);
    let left = dataBytes;
    while (left > 0) {
      const n = Math.min(left, second.length);
      writeSync(fd, second, 0, n);
      left -= n;
    }
  } finally {
    closeSync(fd);
  }
}

const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);

async function plainCopy(from: string, to: string, sync: boolean): Promise<number> {
  const t0 = performance.now();
  await pipeline(createReadStream(from), createWriteStream(to));
  if (sync) {
    const fd = openSync(to, 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
  const ms = performance.now() - t0;
  rmSync(to, { force: true });
  return ms;
}

/** POST /v1/media/upload with the file streamed as the one `file` part; resolves with the media id and the time taken. */
export function upload(input: MediaBenchInput, file: string, size: number): Promise<{ ms: number; mediaId: string }> {
  const boundary = `----was-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.wav"\r\nContent-Type: audio/wav\r\n\r\n`, 'latin1');
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  const url = new URL('/v1/media/upload', input.base);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${input.secret}`,
        'x-service-workspace': input.workspaceId,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - t0;
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`upload: ${res.statusCode} ${body}`));
        const json = JSON.parse(body) as { data: { id: string; sizeBytes: number } };
        if (json.data.sizeBytes !== size) return reject(new Error(`upload stored ${json.data.sizeBytes} bytes, sent ${size}`));
        resolve({ ms, mediaId: json.data.id });
      });
      res.on('error', reject);
    });
    req.write(head);
    const source = createReadStream(file);
    source.on('error', reject);
    source.pipe(req, { end: false });
    source.on('end', () => req.end(tail));
  });
}

async function signedUrl(input: MediaBenchInput, mediaId: string): Promise<string> {
  const res = await fetch(`${input.base}/v1/media/${mediaId}/download`, {
    headers: { authorization: `Bearer ${input.secret}`, 'x-service-workspace': input.workspaceId },
  });
  const json = (await res.json()) as { data: { url: string } };
  if (res.status !== 200) throw new Error(`download URL: ${res.status} ${JSON.stringify(json)}`);
  return json.data.url;
}

/** GET of the signed URL, body read to the end (and counted), over a real socket. */
function download(url: string, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = httpRequest(url, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => {
        const ms = performance.now() - t0;
        if (res.statusCode !== 200) return reject(new Error(`signed download: ${res.statusCode}`));
        if (bytes !== size || Number(res.headers['content-length']) !== size) return reject(new Error(`signed download: ${bytes} bytes (Content-Length ${res.headers['content-length']}), expected ${size}`));
        resolve(ms);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export async function runMediaBench(input: MediaBenchInput): Promise<MediaBenchResult> {
  const file = join(input.workDir, 'bench-media.wav');
  const copy = join(input.workDir, 'bench-media-copy.wav');
  writeWav(file, MEDIA_FILE_BYTES);
  const size = statSync(file).size;
  const samples: MediaBenchSample[] = [];
  try {
    // Warm-up: one upload and download (JIT, page cache, the workspace's caches).
    const warm = await upload(input, file, size);
    await download(await signedUrl(input, warm.mediaId), size);
    for (let round = 1; round <= input.rounds; round++) {
      const copyMs = await plainCopy(file, copy, false);
      const syncedMs = await plainCopy(file, copy, true);
      const up = await upload(input, file, size);
      const url = await signedUrl(input, up.mediaId);
      const downMs = await download(url, size);
      samples.push({ round, copyMBps: mbps(size, copyMs), syncedCopyMBps: mbps(size, syncedMs), uploadMBps: mbps(size, up.ms), downloadMBps: mbps(size, downMs) });
    }
  } finally {
    rmSync(file, { force: true });
    rmSync(copy, { force: true });
  }
  return {
    fileBytes: size,
    samples,
    copyMBps: median(samples.map((s) => s.copyMBps)),
    syncedCopyMBps: median(samples.map((s) => s.syncedCopyMBps)),
    uploadMBps: median(samples.map((s) => s.uploadMBps)),
    downloadMBps: median(samples.map((s) => s.downloadMBps)),
    uploadRatio: median(samples.map((s) => s.uploadMBps / s.copyMBps)),
    downloadRatio: median(samples.map((s) => s.downloadMBps / s.copyMBps)),
  };
}

/** The report lines of the media bench. */
export function mediaReport(r: MediaBenchResult): string[] {
  const mb = (r.fileBytes / 1e6).toFixed(0);
  return [
    `media  what (${mb} MB WAV, ${r.samples.length} rounds, medians)            MB/s   ratio to plain copy`,
    `(m1)   plain file copy, same disk                     ${r.copyMBps.toFixed(0).padStart(7)}`,
    `(m1f)  the same copy, then fsync (for comparison)     ${r.syncedCopyMBps.toFixed(0).padStart(7)}`,
    `(m2)   POST /v1/media/upload (multipart, socket)      ${r.uploadMBps.toFixed(0).padStart(7)}   ${r.uploadRatio.toFixed(2)}`,
    `(m3)   GET signed download URL (socket)               ${r.downloadMBps.toFixed(0).padStart(7)}   ${r.downloadRatio.toFixed(2)}`,
  ];
}
