/**
 * The content checks of an upload, run on the staged file before anything is stored:
 * 1. not empty; 2. identified by its magic bytes (file-type) as an accepted format, never SVG or
 * executable code; 3. the declared MIME type names that same format; 4. the container structure
 * is complete and nothing follows its end (truncated files and appended payloads are refused);
 * 5. no HTML, SVG or script markup near the start or the end (polyglots that browsers or
 * interpreters would run); 6. images are probed without decoding pixels and refused above the
 * pixel bounds (decompression bombs).
 * Every refusal is 400 UNSUPPORTED_MEDIA with `details.reason` saying which check failed.
 */
import { AppError } from '../../http/errors.js';
import { FileReader, MediaRejection } from './file-reader.js';
import { bareMimeType, declaredMatches, fileType, formatForDetected, isExecutableMime, type FormatId, type MediaFormat } from './formats.js';
import { IMAGE_MAX_PIXELS, IMAGE_MAX_TOTAL_PIXELS } from './limits.js';
import { checkGlb, checkMp3, checkMp4, checkOgg, checkWav, checkWebm } from './structure-av.js';
import { checkGif, checkJpeg, checkPng, checkWebp } from './structure-image.js';

const STRUCTURE_CHECKS: Record<FormatId, (r: FileReader) => Promise<void>> = {
  png: checkPng,
  jpeg: checkJpeg,
  gif: checkGif,
  webp: checkWebp,
  wav: checkWav,
  mp3: checkMp3,
  ogg: checkOgg,
  mp4: checkMp4,
  webm: checkWebm,
  glb: checkGlb,
};

/** How much of the start and of the end is searched for markup. */
const SCAN_BYTES = 64 * 1024;

const MARKUP = /<(?:script|iframe|object|embed|applet|meta|link)\b|<\?php|<!doctype\s+html|<(?:svg|html|body|head)[\s>/]|javascript:|vbscript:/;
const SVG_START = /^(?:\ufeff|\s)*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!doctype\s+svg[^>]*>\s*)?<svg[\s>]/;

export interface InspectedMedia {
  format: MediaFormat;
  width?: number;
  height?: number;
}

function reject(reason: MediaRejection['reason'], message: string): never {
  throw new MediaRejection(reason, message);
}

/**
 * Runs every check on the staged file, or on bytes already in memory (a provider's or local
 * engine's output: the same checks, without writing it to a temporary file first); throws 400
 * UNSUPPORTED_MEDIA on the first failure.
 */
export async function inspectUpload(source: string | Buffer, declaredMimeType: string | undefined): Promise<InspectedMedia> {
  try {
    return await inspect(source, declaredMimeType);
  } catch (err) {
    if (err instanceof MediaRejection) {
      throw new AppError('UNSUPPORTED_MEDIA', { message: err.message, details: { reason: err.reason } });
    }
    throw err;
  }
}

async function inspect(source: string | Buffer, declaredMimeType: string | undefined): Promise<InspectedMedia> {
  const reader = typeof source === 'string' ? await FileReader.open(source) : FileReader.of(source);
  try {
    if (reader.size === 0) reject('EMPTY', 'The file is empty.');
    const head = await reader.upTo(0, SCAN_BYTES);
    const declared = bareMimeType(declaredMimeType);
    const detect = await fileType();
    const detected = typeof source === 'string' ? await detect.fileTypeFromFile(source) : await detect.fileTypeFromBuffer(source);
    const format = formatForDetected(detected);
    if (!format) refuseUnknown(head, detected, declared);
    if (!declaredMatches(format, declared)) {
      reject('TYPE_MISMATCH', `The content is ${format.mimeType} but was declared as ${declared || 'no type'}.`);
    }
    await STRUCTURE_CHECKS[format.id](reader);
    const tail = reader.size > SCAN_BYTES ? await reader.upTo(Math.max(SCAN_BYTES, reader.size - SCAN_BYTES), SCAN_BYTES) : Buffer.alloc(0);
    if (MARKUP.test(head.toString('latin1').toLowerCase()) || MARKUP.test(tail.toString('latin1').toLowerCase())) {
      reject('EMBEDDED_MARKUP', 'The file carries HTML, SVG or script markup (a polyglot).');
    }
    return format.kind === 'image' ? { format, ...(await probeImage(source, format)) } : { format };
  } finally {
    await reader.close();
  }
}

function refuseUnknown(head: Buffer, detected: { mime: string } | undefined, declared: string): never {
  const text = head.toString('latin1').toLowerCase();
  if ((detected && isExecutableMime(detected.mime)) || text.startsWith('#!') || text.startsWith('mz')) {
    reject('EXECUTABLE', 'Executable content is not accepted.');
  }
  if (declared === 'image/svg+xml' || SVG_START.test(head.toString('utf8').toLowerCase())) reject('SVG_NOT_ALLOWED', 'SVG images are not accepted.');
  reject(
    'TYPE_NOT_ALLOWED',
    detected
      ? `Content of type ${detected.mime} is not accepted (images: PNG, JPEG, WebP, GIF; audio: MP3, WAV, Ogg; video: MP4, WebM; 3D: GLB).`
      : 'The content is not a recognised media type (images: PNG, JPEG, WebP, GIF; audio: MP3, WAV, Ogg; video: MP4, WebM; 3D: GLB).',
  );
}

const SHARP_FORMATS: Partial<Record<FormatId, string>> = { png: 'png', jpeg: 'jpeg', webp: 'webp', gif: 'gif' };

/** Reads the image header with libvips (no pixel decoding) and applies the pixel bounds. */
async function probeImage(source: string | Buffer, format: MediaFormat): Promise<{ width: number; height: number }> {
  const { default: sharp } = await import('sharp');
  let meta: { format?: string; width?: number; height?: number; pages?: number; pageHeight?: number };
  try {
    meta = await sharp(source, { limitInputPixels: false, sequentialRead: true }).metadata();
  } catch {
    reject('MALFORMED', 'The image header cannot be read.');
  }
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  if (meta.format !== SHARP_FORMATS[format.id] || width <= 0 || height <= 0) reject('MALFORMED', 'The image header is invalid.');
  const frame = width * height;
  if (frame > IMAGE_MAX_PIXELS || frame * Math.max(1, meta.pages ?? 1) > IMAGE_MAX_TOTAL_PIXELS) {
    reject('PIXEL_LIMIT', `The image is too large to process (${width}×${height}${(meta.pages ?? 1) > 1 ? ` × ${meta.pages} frames` : ''}; at most ${IMAGE_MAX_PIXELS.toLocaleString('en-US')} pixels per frame).`);
  }
  return { width, height };
}
