/**
 * Media upload: one multipart part named `file`, from a Blob (a File, or a file-backed Blob from
 * the Node entry), bytes, or a stream. The bytes are hashed on the way and the item the service
 * returns must carry the same sha256, or IntegrityError is thrown. Uploads are never sent twice
 * (the endpoint takes no Idempotency-Key).
 */
import { IntegrityError } from './errors.js';
import type { Sha256Factory } from './hash.js';
import type { Transport } from './transport.js';
import type { MediaItem } from './types.js';

export type UploadSource = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadOptions {
  /** The file name the item gets (default: the File's name, else `upload`). */
  name?: string;
  /** The declared type; it must match the content (default: the Blob's type, else from the name's extension). */
  mimeType?: string;
  signal?: AbortSignal;
}

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  glb: 'model/gltf-binary',
};

export function mimeTypeFromName(name: string): string | undefined {
  const ext = name.toLowerCase().split('.').pop() ?? '';
  return TYPES[ext];
}

async function* chunksOf(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (source as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    for await (const chunk of source as AsyncIterable<Uint8Array>) yield chunk;
  }
}

const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');

export async function uploadMedia(transport: Transport, sha256: Sha256Factory, source: UploadSource, options: UploadOptions = {}): Promise<MediaItem> {
  const hasher = sha256();
  const fileName = options.name ?? (typeof (source as File).name === 'string' && (source as File).name ? (source as File).name : 'upload');
  let body: NonNullable<RequestInit['body']>;
  if (source instanceof Blob || source instanceof Uint8Array || source instanceof ArrayBuffer) {
    const blob = source instanceof Blob ? source : new Blob([source instanceof Uint8Array ? source : new Uint8Array(source)]);
    const type = options.mimeType || blob.type || mimeTypeFromName(fileName) || 'application/octet-stream';
    for await (const chunk of chunksOf(blob.stream())) hasher.update(chunk);
    const form = new FormData();
    form.append('file', blob.type === type ? blob : new Blob([blob], { type }), fileName);
    body = form;
  } else {
    // A stream: a multipart body written around it as it is read, hashing each chunk.
    const type = options.mimeType || mimeTypeFromName(fileName) || 'application/octet-stream';
    const boundary = `----was-sdk-${crypto.randomUUID()}`;
    const encoder = new TextEncoder();
    const head = encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(fileName)}"\r\nContent-Type: ${type}\r\n\r\n`);
    const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
    const chunks = chunksOf(source);
    let stage = 0;
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (stage === 0) {
          stage = 1;
          return controller.enqueue(head);
        }
        if (stage === 1) {
          const next = await chunks.next();
          if (!next.done) {
            hasher.update(next.value);
            return controller.enqueue(next.value);
          }
          stage = 2;
          controller.enqueue(tail);
          return controller.close();
        }
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    const { data } = await transport.json<MediaItem>({
      method: 'POST',
      path: '/v1/media/upload',
      body,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      signal: options.signal,
      retry: false,
    });
    return checkDigest(data, await hasher.hex());
  }
  const { data } = await transport.json<MediaItem>({ method: 'POST', path: '/v1/media/upload', body, signal: options.signal, retry: false });
  return checkDigest(data, await hasher.hex());
}

function checkDigest(item: MediaItem, local: string): MediaItem {
  if (item.sha256 !== local) throw new IntegrityError(`the service stored media ${item.id} with sha256 ${item.sha256}, but the bytes sent hash to ${local}`, local, item.sha256);
  return item;
}
