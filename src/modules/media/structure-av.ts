/**
 * Structure checks of audio, video and 3D containers, without decoding: frames, pages, boxes,
 * elements and chunks must tile the file exactly, so a truncated file or one with something
 * appended (a polyglot) is refused.
 */
import { FileReader, MediaRejection } from './file-reader.js';
import { riffChunks, trailing } from './structure-image.js';

const MAX_UNITS = 5_000_000;

function malformed(message: string): MediaRejection {
  return new MediaRejection('MALFORMED', message);
}

/** WAV: a RIFF WAVE file with a `fmt ` chunk (PCM header of 16+ bytes) before its `data` chunk. */
export async function checkWav(r: FileReader): Promise<void> {
  const chunks = await riffChunks(r, 'WAVE');
  const fmt = chunks.findIndex((c) => c.id === 'fmt ');
  const data = chunks.findIndex((c) => c.id === 'data');
  if (fmt < 0 || chunks[fmt]!.size < 16) throw malformed('The WAV has no valid fmt chunk.');
  if (data < 0 || data < fmt) throw malformed('The WAV has no data chunk after its fmt chunk.');
  const format = await r.bytes(chunks[fmt]!.position, 16, 'fmt chunk');
  const channels = format.readUInt16LE(2);
  const sampleRate = format.readUInt32LE(4);
  const blockAlign = format.readUInt16LE(12);
  if (channels === 0 || sampleRate === 0 || blockAlign === 0) throw malformed('The WAV fmt chunk is invalid.');
}

const MP3_BITRATES: Record<string, number[]> = {
  // kbit/s by index 1..14, for [version 1 | version 2/2.5] × layer III.
  v1: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const MP3_SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** MP3: optional ID3v2 tags, then MPEG layer III frames back to back, optionally an ID3v1 tag. */
export async function checkMp3(r: FileReader): Promise<void> {
  let position = 0;
  while ((await r.upTo(position, 3)).toString('latin1') === 'ID3') {
    const tag = await r.bytes(position, 10, 'ID3 tag header');
    const size = ((tag[6]! & 0x7f) << 21) | ((tag[7]! & 0x7f) << 14) | ((tag[8]! & 0x7f) << 7) | (tag[9]! & 0x7f);
    position += 10 + size + (tag[5]! & 0x10 ? 10 : 0);
    if (position > r.size) throw malformed('The ID3 tag runs past the end of the file (truncated).');
  }
  let frames = 0;
  for (let n = 0; n < MAX_UNITS && position < r.size; n++) {
    if (frames > 0 && position + 128 === r.size && (await r.bytes(position, 3)).toString('latin1') === 'TAG') return;
    const h = await r.bytes(position, 4, 'frame header');
    if (h[0] !== 0xff || (h[1]! & 0xe0) !== 0xe0) {
      throw frames === 0 ? malformed('No MPEG audio frame was found.') : trailing('MP3');
    }
    const version = (h[1]! >> 3) & 3;
    const layer = (h[1]! >> 1) & 3;
    const bitrateIndex = h[2]! >> 4;
    const rateIndex = (h[2]! >> 2) & 3;
    const padding = (h[2]! >> 1) & 1;
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) {
      throw malformed('An MP3 frame header is invalid (only MPEG layer III with a fixed bitrate is accepted).');
    }
    const bitrate = MP3_BITRATES[version === 3 ? 'v1' : 'v2']![bitrateIndex - 1]! * 1000;
    const sampleRate = MP3_SAMPLE_RATES[version]![rateIndex]!;
    const length = Math.floor(((version === 3 ? 144 : 72) * bitrate) / sampleRate) + padding;
    if (position + length > r.size) throw malformed('The last MP3 frame is cut short (truncated).');
    position += length;
    frames++;
  }
  if (frames === 0) throw malformed('No MPEG audio frame was found.');
  if (position !== r.size) throw malformed('Too many MP3 frames.');
}

/** Ogg: pages back to back; the first begins a stream (BOS), the last ends it (EOS). */
export async function checkOgg(r: FileReader): Promise<void> {
  let position = 0;
  let pages = 0;
  let lastFlags = 0;
  while (position < r.size) {
    if (pages >= MAX_UNITS) throw malformed('Too many Ogg pages.');
    const header = await r.bytes(position, 27, 'page header');
    if (header.toString('latin1', 0, 4) !== 'OggS') throw pages === 0 ? malformed('Not an Ogg page.') : trailing('Ogg');
    if (header[4] !== 0) throw malformed('An Ogg page has an unknown version.');
    lastFlags = header[5]!;
    if (pages === 0 && !(lastFlags & 0x02)) throw malformed('The first Ogg page does not begin a stream.');
    const segments = header[26]!;
    const lacing = await r.bytes(position + 27, segments, 'segment table');
    let body = 0;
    for (const l of lacing) body += l;
    position += 27 + segments + body;
    if (position > r.size) throw malformed('The last Ogg page is cut short (truncated).');
    pages++;
  }
  if (!(lastFlags & 0x04)) throw malformed('The Ogg stream does not end (truncated).');
}

/** ISO base media (MP4): top-level boxes tile the file; `ftyp` first; a `moov` somewhere. */
export async function checkMp4(r: FileReader): Promise<void> {
  let position = 0;
  let boxes = 0;
  let sawMoov = false;
  while (position < r.size) {
    if (boxes >= MAX_UNITS) throw malformed('Too many MP4 boxes.');
    const header = await r.bytes(position, 8, 'box header');
    let size = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    if (!/^[\x20-\x7e]{4}$/.test(type)) throw boxes === 0 ? malformed('Not an MP4 box.') : trailing('MP4');
    if (boxes === 0 && type !== 'ftyp') throw malformed('An MP4 must start with its ftyp box.');
    let headerSize = 8;
    if (size === 1) {
      const large = (await r.bytes(position + 8, 8, 'box size')).readBigUInt64BE(0);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw malformed('An MP4 box is too large.');
      size = Number(large);
      headerSize = 16;
    } else if (size === 0) {
      size = r.size - position;
    }
    if (size < headerSize) throw malformed('An MP4 box size is invalid.');
    if (position + size > r.size) throw malformed(`The MP4 ${type} box runs past the end of the file (truncated).`);
    if (type === 'moov') sawMoov = true;
    position += size;
    boxes++;
  }
  if (!sawMoov) throw malformed('The MP4 has no moov box (truncated or incomplete).');
}

/** An EBML variable-length integer at `position`: its byte length and value (`unknown` = all ones). */
async function vint(r: FileReader, position: number, keepMarker: boolean): Promise<{ length: number; value: number; unknown: boolean }> {
  const first = await r.u8(position, 'element header');
  if (first === 0) throw malformed('A WebM element header is invalid.');
  const length = Math.clz32(first) - 23;
  const bytes = await r.bytes(position, length, 'element header');
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === (0xff >> length);
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[i]!;
    if (bytes[i] !== 0xff) allOnes = false;
  }
  return { length, value, unknown: !keepMarker && allOnes };
}

const EBML_HEADER = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const VOID = 0xec;
const INFO = 0x1549a966;
const TRACKS = 0x1654ae6b;
const CLUSTER = 0x1f43b675;

/** WebM: the EBML header, then a Segment whose level-1 elements fit inside it and the file. */
export async function checkWebm(r: FileReader): Promise<void> {
  let position = 0;
  let sawSegment = false;
  for (let n = 0; position < r.size; n++) {
    if (n >= MAX_UNITS) throw malformed('Too many WebM elements.');
    const id = await vint(r, position, true);
    const size = await vint(r, position + id.length, false);
    const body = position + id.length + size.length;
    if (n === 0 && id.value !== EBML_HEADER) throw malformed('Not an EBML header.');
    if (n > 0 && id.value !== SEGMENT && id.value !== VOID) throw trailing('WebM');
    if (id.value === SEGMENT) {
      const end = size.unknown ? r.size : body + size.value;
      if (end > r.size) throw malformed('The WebM segment runs past the end of the file (truncated).');
      await checkSegment(r, body, end);
      sawSegment = true;
      position = end;
      continue;
    }
    if (size.unknown || body + size.value > r.size) throw malformed('A WebM element runs past the end of the file (truncated).');
    position = body + size.value;
  }
  if (!sawSegment) throw malformed('The WebM has no segment.');
}

async function checkSegment(r: FileReader, from: number, end: number): Promise<void> {
  let position = from;
  let sawInfo = false;
  let sawTracks = false;
  for (let n = 0; position < end; n++) {
    if (n >= MAX_UNITS) throw malformed('Too many WebM elements.');
    const id = await vint(r, position, true);
    const size = await vint(r, position + id.length, false);
    const body = position + id.length + size.length;
    if (id.value === INFO) sawInfo = true;
    if (id.value === TRACKS) sawTracks = true;
    if (size.unknown) {
      // A live-style cluster of unknown size runs to the end of the segment.
      if (id.value !== CLUSTER) throw malformed('A WebM element has an unknown size.');
      break;
    }
    if (body + size.value > end) throw malformed('A WebM element runs past the end of its segment (truncated).');
    position = body + size.value;
  }
  if (!sawInfo || !sawTracks) throw malformed('The WebM segment lacks its Info or Tracks element.');
}

const GLB_JSON = 0x4e4f534a;
const GLB_BIN = 0x004e4942;
const GLB_MAX_JSON_BYTES = 32 * 1024 * 1024;

/** GLB (glTF 2.0 binary): header length equals the file size; a JSON chunk, then an optional BIN chunk. */
export async function checkGlb(r: FileReader): Promise<void> {
  const header = await r.bytes(0, 12, 'header');
  if (header.toString('latin1', 0, 4) !== 'glTF' || header.readUInt32LE(4) !== 2) throw malformed('Not a glTF 2.0 binary header.');
  const length = header.readUInt32LE(8);
  if (length > r.size) throw malformed('The GLB is shorter than its header says (truncated).');
  if (length < r.size) throw trailing('GLB');
  let position = 12;
  let chunk = 0;
  while (position < r.size) {
    const ch = await r.bytes(position, 8, 'chunk header');
    const size = ch.readUInt32LE(0);
    const type = ch.readUInt32LE(4);
    if (position + 8 + size > r.size) throw malformed('A GLB chunk runs past the end of the file (truncated).');
    if (chunk === 0) {
      if (type !== GLB_JSON) throw malformed('A GLB must start with its JSON chunk.');
      if (size > GLB_MAX_JSON_BYTES) throw malformed('The GLB JSON chunk is too large.');
      let json: unknown;
      try {
        json = JSON.parse((await r.bytes(position + 8, size, 'JSON chunk')).toString('utf8'));
      } catch {
        throw malformed('The GLB JSON chunk is not valid JSON.');
      }
      const asset = (json as { asset?: { version?: unknown } } | null)?.asset;
      if (typeof json !== 'object' || json === null || asset?.version !== '2.0') throw malformed('The GLB JSON chunk lacks asset.version "2.0".');
    } else if (chunk === 1 && type !== GLB_BIN) {
      throw malformed('The second GLB chunk must be BIN.');
    } else if (chunk > 1) {
      throw trailing('GLB');
    }
    position += 8 + size;
    chunk++;
  }
  if (chunk === 0) throw malformed('The GLB has no JSON chunk.');
}
