/**
 * Positional reads of a staged upload through a 64 KiB window, so the structure checks can walk a
 * 250 MiB file chunk by chunk with flat memory. A read past the end throws MediaRejection
 * ('MALFORMED'): for a container format that means the file was truncated.
 * A file a provider or local engine produced is already in memory: `FileReader.of(bytes)` reads
 * the same way from that buffer (views, no copy), so it is checked without being staged on disk.
 */
import { open, type FileHandle } from 'node:fs/promises';

export type RejectReason =
  | 'EMPTY'
  | 'TYPE_NOT_ALLOWED'
  | 'TYPE_MISMATCH'
  | 'SVG_NOT_ALLOWED'
  | 'EXECUTABLE'
  | 'MALFORMED'
  | 'TRAILING_DATA'
  | 'EMBEDDED_MARKUP'
  | 'PIXEL_LIMIT';

/** Why an upload is refused; inspect.ts turns it into 400 UNSUPPORTED_MEDIA with details.reason. */
export class MediaRejection extends Error {
  constructor(
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
    this.name = 'MediaRejection';
  }
}

const WINDOW = 64 * 1024;

export class FileReader {
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  private constructor(
    private readonly handle: FileHandle | undefined,
    readonly size: number,
    private readonly memory?: Buffer,
  ) {}

  /** A reader of bytes already in memory. */
  static of(bytes: Buffer): FileReader {
    return new FileReader(undefined, bytes.length, bytes);
  }

  static async open(path: string): Promise<FileReader> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      return new FileReader(handle, size);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.handle?.close();
  }

  /** `length` bytes at `position`; throws MALFORMED when the file ends first. */
  async bytes(position: number, length: number, what = 'data'): Promise<Buffer> {
    if (position < 0 || length < 0 || position + length > this.size) {
      throw new MediaRejection('MALFORMED', `The file ends inside its ${what} (truncated or corrupt).`);
    }
    const end = position + length;
    if (this.memory) return this.memory.subarray(position, end);
    if (position >= this.windowStart && end <= this.windowStart + this.window.length) {
      return this.window.subarray(position - this.windowStart, end - this.windowStart);
    }
    const want = Math.min(Math.max(length, WINDOW), this.size - position);
    const buffer = Buffer.allocUnsafe(want);
    let filled = 0;
    while (filled < want) {
      const { bytesRead } = await this.handle!.read(buffer, filled, want - filled, position + filled);
      if (bytesRead === 0) throw new MediaRejection('MALFORMED', 'The file changed while it was checked.');
      filled += bytesRead;
    }
    if (length <= WINDOW) {
      this.window = buffer;
      this.windowStart = position;
    }
    return buffer.subarray(0, length);
  }

  /** Up to `length` bytes at `position` (fewer at the end of the file). */
  async upTo(position: number, length: number): Promise<Buffer> {
    const n = Math.max(0, Math.min(length, this.size - position));
    return n === 0 ? Buffer.alloc(0) : this.bytes(position, n);
  }

  async u8(position: number, what?: string): Promise<number> {
    return (await this.bytes(position, 1, what))[0]!;
  }

  /** Position of the next `byte` at or after `from`, or -1. */
  async indexOf(byte: number, from: number): Promise<number> {
    let position = from;
    while (position < this.size) {
      const chunk = await this.upTo(position, WINDOW);
      const i = chunk.indexOf(byte);
      if (i >= 0) return position + i;
      position += chunk.length;
    }
    return -1;
  }
}
