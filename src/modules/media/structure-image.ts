/**
 * Structure checks of image containers, without decoding pixels: every chunk, segment or block
 * must lie inside the file (else it was truncated) and the format's end marker must be the last
 * byte (else something is appended: a ZIP, HTML or script riding along makes a polyglot).
 */
import { FileReader, MediaRejection } from './file-reader.js';

const MAX_UNITS = 5_000_000;

function malformed(message: string): MediaRejection {
  return new MediaRejection('MALFORMED', message);
}

export function trailing(format: string): MediaRejection {
  return new MediaRejection('TRAILING_DATA', `Data follows the end of the ${format} content (a polyglot or appended payload).`);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** PNG: signature, IHDR first, chunks back to back, at least one IDAT, IEND last. */
export async function checkPng(r: FileReader): Promise<void> {
  if (!(await r.bytes(0, 8, 'signature')).equals(PNG_SIGNATURE)) throw malformed('Not a PNG signature.');
  let position = 8;
  let sawIdat = false;
  for (let n = 0; n < MAX_UNITS; n++) {
    const header = await r.bytes(position, 8, 'chunk header');
    const length = header.readUInt32BE(0);
    const type = header.toString('latin1', 4, 8);
    if (length > 0x7fffffff || !/^[A-Za-z]{4}$/.test(type)) throw malformed('A PNG chunk header is invalid.');
    if (n === 0 && (type !== 'IHDR' || length !== 13)) throw malformed('A PNG must start with its IHDR chunk.');
    const end = position + 12 + length;
    if (end > r.size) throw malformed('A PNG chunk runs past the end of the file (truncated).');
    if (type === 'IDAT') sawIdat = true;
    if (type === 'IEND') {
      if (!sawIdat) throw malformed('The PNG has no image data.');
      if (end !== r.size) throw trailing('PNG');
      return;
    }
    position = end;
  }
  throw malformed('Too many PNG chunks.');
}

/** JPEG: SOI, marker segments, entropy-coded scans, a frame header, and EOI as the last bytes. */
export async function checkJpeg(r: FileReader): Promise<void> {
  const soi = await r.bytes(0, 3, 'header');
  if (soi[0] !== 0xff || soi[1] !== 0xd8 || soi[2] !== 0xff) throw malformed('Not a JPEG start-of-image marker.');
  let position = 2;
  let sawFrame = false;
  for (let n = 0; n < MAX_UNITS; n++) {
    if ((await r.u8(position, 'marker')) !== 0xff) throw malformed('A JPEG marker was expected.');
    let marker = await r.u8(position + 1, 'marker');
    while (marker === 0xff) marker = await r.u8(++position + 1, 'marker');
    position += 2;
    if (marker === 0xd9) {
      if (!sawFrame) throw malformed('The JPEG has no frame header.');
      if (position !== r.size) throw trailing('JPEG');
      return;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    if (marker === 0x00 || marker === 0xd8) throw malformed('An unexpected JPEG marker was found.');
    const length = (await r.bytes(position, 2, 'segment length')).readUInt16BE(0);
    if (length < 2) throw malformed('A JPEG segment length is invalid.');
    if (position + length > r.size) throw malformed('A JPEG segment runs past the end of the file (truncated).');
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) sawFrame = true;
    position += length;
    if (marker === 0xda) {
      if (!sawFrame) throw malformed('A JPEG scan precedes its frame header.');
      position = await endOfScan(r, position);
    }
  }
  throw malformed('Too many JPEG segments.');
}

/** The position of the marker ending an entropy-coded scan (0xFF not followed by 0x00 or RSTn). */
async function endOfScan(r: FileReader, from: number): Promise<number> {
  let position = from;
  for (;;) {
    const ff = await r.indexOf(0xff, position);
    if (ff < 0 || ff + 1 >= r.size) throw malformed('The JPEG ends inside its image data (truncated).');
    const next = await r.u8(ff + 1);
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
      position = next === 0xff ? ff + 1 : ff + 2;
      continue;
    }
    return ff;
  }
}

/** GIF: header, colour tables, image and extension blocks with their sub-blocks, trailer last. */
export async function checkGif(r: FileReader): Promise<void> {
  const signature = (await r.bytes(0, 6, 'header')).toString('latin1');
  if (signature !== 'GIF87a' && signature !== 'GIF89a') throw malformed('Not a GIF header.');
  const packed = await r.u8(10, 'screen descriptor');
  let position = 13 + (packed & 0x80 ? 3 * (1 << ((packed & 7) + 1)) : 0);
  let images = 0;
  for (let n = 0; n < MAX_UNITS; n++) {
    const introducer = await r.u8(position, 'block');
    if (introducer === 0x3b) {
      if (images === 0) throw malformed('The GIF has no image.');
      if (position + 1 !== r.size) throw trailing('GIF');
      return;
    }
    if (introducer === 0x2c) {
      const descriptor = await r.bytes(position + 1, 9, 'image descriptor');
      const local = descriptor[8]!;
      position += 10 + (local & 0x80 ? 3 * (1 << ((local & 7) + 1)) : 0);
      await r.u8(position, 'image data');
      position = await skipSubBlocks(r, position + 1);
      images++;
    } else if (introducer === 0x21) {
      position = await skipSubBlocks(r, position + 2);
    } else {
      throw malformed('An unknown GIF block was found.');
    }
  }
  throw malformed('Too many GIF blocks.');
}

async function skipSubBlocks(r: FileReader, from: number): Promise<number> {
  let position = from;
  for (;;) {
    const size = await r.u8(position, 'sub-block');
    position += 1 + size;
    if (size === 0) return position;
    if (position > r.size) throw malformed('A GIF block runs past the end of the file (truncated).');
  }
}

/**
 * RIFF containers (WebP, WAV): the RIFF size covers exactly the rest of the file, and the chunks
 * (padded to even sizes) tile it. Returns the chunk ids in order with their payload positions.
 */
export async function riffChunks(r: FileReader, form: string): Promise<{ id: string; position: number; size: number }[]> {
  const header = await r.bytes(0, 12, 'RIFF header');
  if (header.toString('latin1', 0, 4) !== 'RIFF' || header.toString('latin1', 8, 12) !== form) throw malformed(`Not a RIFF ${form} header.`);
  const declared = header.readUInt32LE(4) + 8;
  if (declared > r.size) throw malformed(`The ${form} file is shorter than its header says (truncated).`);
  if (declared < r.size) throw trailing(form);
  const chunks: { id: string; position: number; size: number }[] = [];
  let position = 12;
  while (position < r.size) {
    if (chunks.length >= MAX_UNITS) throw malformed('Too many RIFF chunks.');
    const chunk = await r.bytes(position, 8, 'chunk header');
    const id = chunk.toString('latin1', 0, 4);
    const size = chunk.readUInt32LE(4);
    if (!/^[\x20-\x7e]{4}$/.test(id)) throw malformed('A RIFF chunk id is invalid.');
    const end = position + 8 + size + (size & 1);
    // An odd last chunk may lack its pad byte; everything else must fit exactly.
    if (end > r.size && !(end === r.size + 1 && size & 1)) throw malformed(`A ${form} chunk runs past the end of the file (truncated).`);
    chunks.push({ id, position: position + 8, size });
    position = end;
  }
  return chunks;
}

/** WebP: a RIFF WEBP file whose first chunk is VP8, VP8L or VP8X. */
export async function checkWebp(r: FileReader): Promise<void> {
  const chunks = await riffChunks(r, 'WEBP');
  const first = chunks[0]?.id;
  if (first !== 'VP8 ' && first !== 'VP8L' && first !== 'VP8X') throw malformed('The WebP has no image chunk.');
}
