/**
 * The media types the library accepts (issue 4): the content is identified by its magic bytes and
 * must be one of these formats, and the MIME type the client declared must name the same format
 * (a few common aliases are understood). SVG, archives and anything executable are never accepted;
 * documents are accepted only where an operation needs them, and none does yet.
 */
import type { MediaKind } from '../../operations/contract.js';

export type { MediaKind };
export type StoredKind = MediaKind | 'document';

export type FormatId = 'png' | 'jpeg' | 'webp' | 'gif' | 'mp3' | 'wav' | 'ogg' | 'mp4' | 'webm' | 'glb';

export interface MediaFormat {
  id: FormatId;
  /** The MIME type stored and served. */
  mimeType: string;
  kind: MediaKind;
  /** Extension used when an upload has no usable filename. */
  extension: string;
  /** Declared MIME types (lowercase, without parameters) that name this format. */
  aliases: readonly string[];
}

export const MEDIA_FORMATS: Readonly<Record<FormatId, MediaFormat>> = {
  png: { id: 'png', mimeType: 'image/png', kind: 'image', extension: 'png', aliases: ['image/png', 'image/x-png'] },
  jpeg: { id: 'jpeg', mimeType: 'image/jpeg', kind: 'image', extension: 'jpg', aliases: ['image/jpeg', 'image/jpg', 'image/pjpeg'] },
  webp: { id: 'webp', mimeType: 'image/webp', kind: 'image', extension: 'webp', aliases: ['image/webp'] },
  gif: { id: 'gif', mimeType: 'image/gif', kind: 'image', extension: 'gif', aliases: ['image/gif'] },
  mp3: { id: 'mp3', mimeType: 'audio/mpeg', kind: 'audio', extension: 'mp3', aliases: ['audio/mpeg', 'audio/mp3', 'audio/mpeg3', 'audio/x-mpeg-3'] },
  wav: { id: 'wav', mimeType: 'audio/wav', kind: 'audio', extension: 'wav', aliases: ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'] },
  ogg: { id: 'ogg', mimeType: 'audio/ogg', kind: 'audio', extension: 'ogg', aliases: ['audio/ogg', 'audio/opus', 'audio/vorbis', 'application/ogg'] },
  mp4: { id: 'mp4', mimeType: 'video/mp4', kind: 'video', extension: 'mp4', aliases: ['video/mp4'] },
  webm: { id: 'webm', mimeType: 'video/webm', kind: 'video', extension: 'webm', aliases: ['video/webm'] },
  glb: { id: 'glb', mimeType: 'model/gltf-binary', kind: 'model', extension: 'glb', aliases: ['model/gltf-binary'] },
};

/** The lowercase MIME type without parameters (`Image/PNG; charset=x` → `image/png`). */
export function bareMimeType(declared: string | undefined): string {
  return (declared ?? '').split(';')[0]!.trim().toLowerCase();
}

/** True when the declared MIME type names `format`. */
export function declaredMatches(format: MediaFormat, declared: string | undefined): boolean {
  return format.aliases.includes(bareMimeType(declared));
}

/** The format named by a declared MIME type, if it is one of ours. */
export function formatForDeclared(declared: string | undefined): MediaFormat | undefined {
  const bare = bareMimeType(declared);
  return Object.values(MEDIA_FORMATS).find((f) => f.aliases.includes(bare));
}

/**
 * Our format for a file-type detection result (by extension, which file-type keeps stable), or
 * undefined when the detected type is not accepted. MP4 brands that file-type maps to other MIME
 * types (QuickTime, M4A, 3GP) are not accepted.
 */
let fileTypeModule: Promise<typeof import('file-type')> | undefined;

/** The file-type package (magic-byte detection), loaded on its first use rather than with the service. */
export function fileType(): Promise<typeof import('file-type')> {
  return (fileTypeModule ??= import('file-type'));
}

export function formatForDetected(detected: { ext: string; mime: string } | undefined): MediaFormat | undefined {
  if (!detected) return undefined;
  switch (detected.ext) {
    case 'png':
      return MEDIA_FORMATS.png;
    case 'jpg':
      return MEDIA_FORMATS.jpeg;
    case 'webp':
      return MEDIA_FORMATS.webp;
    case 'gif':
      return MEDIA_FORMATS.gif;
    case 'mp3':
      return MEDIA_FORMATS.mp3;
    case 'wav':
      return MEDIA_FORMATS.wav;
    case 'ogg':
    case 'oga':
    case 'opus':
    case 'spx':
      return detected.mime.startsWith('audio/') ? MEDIA_FORMATS.ogg : undefined;
    case 'mp4':
      return detected.mime === 'video/mp4' ? MEDIA_FORMATS.mp4 : undefined;
    case 'webm':
      return MEDIA_FORMATS.webm;
    case 'glb':
      return MEDIA_FORMATS.glb;
    default:
      return undefined;
  }
}

/** Detected types refused as executable code (programs, libraries, installers, bytecode). */
const EXECUTABLE_MIME_TYPES = new Set([
  'application/x-elf',
  'application/x-msdownload',
  'application/x-mach-binary',
  'application/wasm',
  'application/java-vm',
  'application/x-msi',
  'application/x-executable',
  'application/x-sharedlib',
  'application/vnd.microsoft.portable-executable',
  'application/x-deb',
  'application/x-rpm',
  'application/vnd.android.package-archive',
  'application/java-archive',
  'application/x-apple-diskimage',
]);

export function isExecutableMime(mime: string): boolean {
  return EXECUTABLE_MIME_TYPES.has(mime);
}

/** Kind of a stored item from its MIME type (job results carry a MIME type, not a format). */
export function kindForMimeType(mimeType: string): StoredKind {
  const bare = bareMimeType(mimeType);
  const format = formatForDeclared(bare);
  if (format) return format.kind;
  if (bare.startsWith('image/')) return 'image';
  if (bare.startsWith('audio/')) return 'audio';
  if (bare.startsWith('video/')) return 'video';
  if (bare.startsWith('model/')) return 'model';
  return 'document';
}

const MAX_NAME_LENGTH = 255;

/**
 * A media item's name: the uploaded filename stripped of any path (both separators) and of
 * control and invisible format characters (C0, DEL, C1, bidi overrides, zero-width marks), trimmed
 * and bounded. An empty result falls back to `media.<extension>`.
 */
export function sanitizeFileName(raw: string | undefined, fallbackExtension: string): string {
  const withoutControls = (raw ?? '').replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, '');
  const base = withoutControls.split(/[\\/]/).pop() ?? '';
  let name = base.trim();
  if (name === '.' || name === '..') name = '';
  if ([...name].length > MAX_NAME_LENGTH) {
    const chars = [...name];
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = chars.slice(0, MAX_NAME_LENGTH - [...ext].length).join('') + ext;
  }
  return name === '' ? `media.${fallbackExtension}` : name;
}
