/**
 * Small, valid files of each kind the simulated provider returns: PNG (zlib-compressed RGBA),
 * WAV (16-bit PCM tone), MP4 (ISO BMFF with ftyp, mvhd and an empty mdat) and GLB (glTF 2.0
 * binary with a JSON chunk). Deterministic for a given seed.
 */
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * The files are pure functions of their arguments, so each is made once and kept (a few hundred
 * distinct ones at most); a job gets its own copy, so nothing it does can change the kept bytes.
 */
const made = new Map<string, Buffer>();
const MAX_KEPT = 512;

function kept(key: string, make: () => Buffer): Buffer {
  let bytes = made.get(key);
  if (!bytes) {
    bytes = make();
    if (made.size >= MAX_KEPT) made.delete(made.keys().next().value!);
    made.set(key, bytes);
  }
  return Buffer.from(bytes);
}

/** A width×height PNG filled with a colour derived from `seed`, with a diagonal stripe. */
export function makePng(width: number, height: number, seed = 0): Buffer {
  return kept(`png:${width}:${height}:${seed}`, () => renderPng(width, height, seed));
}

function renderPng(width: number, height: number, seed: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const rowBytes = width * 4 + 1;
  const raw = Buffer.alloc(rowBytes * height);
  const r = (seed * 67) & 0xff;
  const g = (seed * 131 + 80) & 0xff;
  const b = (seed * 29 + 160) & 0xff;
  for (let y = 0; y < height; y++) {
    raw[y * rowBytes] = 0;
    for (let x = 0; x < width; x++) {
      const o = y * rowBytes + 1 + x * 4;
      const stripe = Math.abs(x - y) < Math.max(1, width / 16);
      raw[o] = stripe ? 255 - r : r;
      raw[o + 1] = stripe ? 255 - g : g;
      raw[o + 2] = stripe ? 255 - b : b;
      raw[o + 3] = 255;
    }
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Mono 16-bit PCM WAV with a quiet sine tone. */
export function makeWav(seconds: number, sampleRate = 8000, frequency = 440): Buffer {
  const samples = Math.max(1, Math.round(seconds * sampleRate));
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * frequency * i) / sampleRate) * 3000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const size = Buffer.alloc(4);
  size.writeUInt32BE(8 + body.length);
  return Buffer.concat([size, Buffer.from(type, 'ascii'), body]);
}

/** An MP4 container (ftyp isom, moov with mvhd of the given duration, empty mdat). */
export function makeMp4(seconds: number): Buffer {
  const ftyp = box('ftyp', Buffer.from('isom', 'ascii'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41', 'ascii'));
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(0, 0); // version + flags
  mvhd.writeUInt32BE(1000, 12); // timescale
  mvhd.writeUInt32BE(Math.round(seconds * 1000), 16); // duration
  mvhd.writeUInt32BE(0x00010000, 20); // rate 1.0
  mvhd.writeUInt16BE(0x0100, 24); // volume 1.0
  const matrix = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];
  matrix.forEach((v, i) => mvhd.writeUInt32BE(v, 36 + i * 4));
  mvhd.writeUInt32BE(2, 96); // next track id
  return Buffer.concat([ftyp, box('moov', box('mvhd', mvhd)), box('mdat')]);
}

/** A glTF 2.0 binary (GLB) holding one empty scene. */
export function makeGlb(name: string): Buffer {
  const json = JSON.stringify({ asset: { version: '2.0', generator: 'workspace-automation-service simulated provider' }, scene: 0, scenes: [{ name, nodes: [] }] });
  let jsonBytes = Buffer.from(json, 'utf8');
  const pad = (4 - (jsonBytes.length % 4)) % 4;
  jsonBytes = Buffer.concat([jsonBytes, Buffer.alloc(pad, 0x20)]);
  const header = Buffer.alloc(12);
  header.write('glTF', 0, 'ascii');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + 8 + jsonBytes.length, 8);
  const chunkHeader = Buffer.alloc(8);
  chunkHeader.writeUInt32LE(jsonBytes.length, 0);
  chunkHeader.write('JSON', 4, 'ascii');
  return Buffer.concat([header, chunkHeader, jsonBytes]);
}
