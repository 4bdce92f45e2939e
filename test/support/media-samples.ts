/**
 * Sample files for the media upload fuzz tests (test/media/media-fuzz.test.ts,
 * test/media/media-mcp-fuzz.test.ts): one real file of every accepted format (with whether a
 * truncated copy or appended bytes must be refused), magic bytes of accepted and refused formats,
 * and payloads to append.
 */
import { MEDIA_FORMATS, type FormatId } from '../../src/modules/media/formats.js';
import * as files from './media.js';

// ---------------------------------------------------------------------------------------------
// Real files

export interface Ref {
  id: FormatId;
  /** The canonical MIME type (what the item must be stored as). */
  type: string;
  /** The extension a nameless upload falls back to (decisions.md: a name is always there). */
  ext: string;
  bytes: Buffer;
  /** Every strict prefix is refused: the container says where it ends. */
  truncationRefused: boolean;
  /** Anything appended is refused: the format's end marker or header length must be the last byte. */
  appendRefused: boolean;
}

async function references(): Promise<Ref[]> {
  const ref = (id: FormatId, bytes: Buffer, truncationRefused: boolean, appendRefused: boolean): Ref => ({
    id,
    type: MEDIA_FORMATS[id].mimeType,
    ext: MEDIA_FORMATS[id].extension,
    bytes,
    truncationRefused,
    appendRefused,
  });
  return [
    ref('png', await files.png(16, 16), true, true),
    ref('png', await files.png(3, 70), true, true),
    ref('jpeg', await files.jpeg(24, 16), true, true),
    ref('webp', await files.webp(16, 16), true, true),
    ref('gif', await files.gif(16, 16), true, true),
    ref('wav', files.wav(300), true, true),
    // MP3 frames and MP4 boxes tile the file: a cut at a frame or box boundary is a whole file.
    ref('mp3', files.mp3(4), false, false),
    // Ogg pages and WebM void elements may follow the end: appended bytes can be a valid tail.
    ref('ogg', files.ogg(), true, false),
    ref('mp4', files.mp4(), false, false),
    ref('webm', files.webm(), true, false),
    ref('glb', files.glb(), true, true),
  ];
}

export const REFS = await references();

/** Magic bytes of accepted formats and of refused ones (archives, documents, executables, markup). */
export const MAGICS: Buffer[] = [
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  Buffer.from([0xff, 0xd8, 0xff, 0xdb]),
  Buffer.from('GIF89a', 'latin1'),
  Buffer.from('GIF87a\x10\x00\x10\x00\x80\x00\x00', 'latin1'),
  Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'),
  Buffer.from('RIFF\xff\xff\xff\x7fWEBPVP8L', 'latin1'),
  Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'),
  Buffer.from('RIFF\x00\x00\x00\x00AVI LIST', 'latin1'),
  Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00', 'latin1'),
  Buffer.from([0xff, 0xfb, 0x90, 0xc4]),
  Buffer.from([0xff, 0xf3, 0x40, 0xc0]),
  Buffer.from('OggS\x00\x02', 'latin1'),
  Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x34\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis', 'latin1'),
  Buffer.from('\x00\x00\x00\x18ftypisom', 'latin1'),
  Buffer.from('\x00\x00\x00\x14ftypqt  ', 'latin1'),
  Buffer.from('\x00\x00\x00\x1cftypM4A ', 'latin1'),
  Buffer.from('\x00\x00\x00\x01ftypisom', 'latin1'),
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3]),
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x88, 0x6d, 0x61, 0x74, 0x72, 0x6f, 0x73, 0x6b, 0x61]),
  Buffer.from('glTF\x02\x00\x00\x00', 'latin1'),
  Buffer.from('PK\x03\x04', 'latin1'),
  Buffer.from('PK\x03\x04\x14\x00\x08\x00\x63\x00', 'latin1'),
  Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
  Buffer.from('%PDF-1.7\n', 'latin1'),
  Buffer.from('II*\x00\x08\x00\x00\x00', 'latin1'),
  Buffer.from('MM\x00*', 'latin1'),
  Buffer.from("7z\xbc\xaf'\x1c", 'latin1'),
  Buffer.from('Rar!\x1a\x07\x00', 'latin1'),
  Buffer.from('BM', 'latin1'),
  Buffer.from('fLaC', 'latin1'),
  Buffer.from('MThd\x00\x00\x00\x06', 'latin1'),
  Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]),
  Buffer.from('\x7fELF\x02\x01\x01\x00', 'latin1'),
  Buffer.from('MZ\x90\x00', 'latin1'),
  Buffer.from('\x00asm\x01\x00\x00\x00', 'latin1'),
  Buffer.from('\xca\xfe\xba\xbe', 'latin1'),
  Buffer.from('#!/bin/sh\n', 'latin1'),
  Buffer.from('<?xml version="1.0"?><svg ', 'latin1'),
  Buffer.from('<svg xmlns="http://www.w3.org/2000/svg">', 'latin1'),
  Buffer.from('<!DOCTYPE html><html><script>', 'latin1'),
  Buffer.from('wOFF', 'latin1'),
  Buffer.from('\x00\x00\x01\x00\x01\x00', 'latin1'),
  Buffer.from('8BPS', 'latin1'),
  Buffer.from('ustar', 'latin1'),
];

export const APPENDED_PAYLOADS: Buffer[] = [
  files.zipArchive(),
  Buffer.from('<html><body><script>alert(1)</script></body></html>'),
  Buffer.from('<?php system($_GET["c"]); ?>'),
  files.SVG,
  Buffer.from([0]),
  Buffer.from('\r\n'),
];
