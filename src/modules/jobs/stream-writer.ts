/**
 * Server-sent events on a raw Node response (the route hijacks the reply, so Fastify serializes
 * no envelope): the response head, `event`/`id`/`data` frames and `:` comment lines.
 *
 * `data` is one line of JSON (JSON.stringify escapes CR and LF, the only SSE line breaks). A
 * client that stops reading cannot make the server buffer without bound: once more than
 * `maxBufferedBytes` wait in the socket, the writer reports overflow and the stream ends (the
 * client reconnects with Last-Event-ID and loses nothing).
 */
import type { ServerResponse } from 'node:http';

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  // nginx and similar proxies must pass events through at once instead of buffering them.
  'X-Accel-Buffering': 'no',
} as const;

export class SseWriter {
  private ended = false;
  private opened = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBufferedBytes: number,
  ) {}

  /** Writes the 200 head with the SSE headers and the given extra headers (request id, rate limits). */
  open(extraHeaders: Record<string, string | number | string[] | undefined>): void {
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(extraHeaders)) {
      // Content-Type/Length set earlier for a JSON answer do not apply to the stream.
      if (value !== undefined && !/^content-(type|length)$/i.test(name)) headers[name] = value;
    }
    this.opened = true;
    this.res.writeHead(200, { ...headers, ...SSE_HEADERS });
    this.res.flushHeaders();
  }

  /** False once the response ended or the client is gone. */
  get writable(): boolean {
    return this.opened && !this.ended && !this.res.destroyed && this.res.writable;
  }

  /** True when the client reads too slowly (more than maxBufferedBytes unsent). */
  get overflowing(): boolean {
    return this.res.writableLength > this.maxBufferedBytes;
  }

  event(type: string, id: number | undefined, data: unknown): boolean {
    const idLine = id === undefined ? '' : `id: ${id}\n`;
    return this.write(`event: ${type}\n${idLine}data: ${JSON.stringify(data)}\n\n`);
  }

  comment(text: string): boolean {
    return this.write(`: ${text}\n\n`);
  }

  private write(chunk: string): boolean {
    if (!this.writable) return false;
    this.res.write(chunk);
    return !this.overflowing;
  }

  /** Ends the stream; before `open` it only stops further writes (the caller answers instead). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.opened && !this.res.destroyed) this.res.end();
  }
}
