/**
 * The service's logger: pino writing JSON lines to stdout without a request ever waiting for a
 * write(2).
 *
 * - Lines are gathered in memory and handed to the kernel in writes of LOG_BUFFER_BYTES to
 *   LOG_WRITE_BYTES (one write per 6 to 12 request lines under load instead of one per line),
 *   and at least every LOG_FLUSH_MS when fewer arrive.
 * - When stdout is a pipe or a socket (a supervisor, a container runtime, journald, a shell
 *   pipeline), the chunks go to it as a non-blocking stream (StreamDestination): a chunk is
 *   written on the event loop's thread at once when the pipe has room, and queued in memory when
 *   it has not. When stdout is a file or a terminal, pino's asynchronous destination (sonic-boom,
 *   `sync: false`) writes the chunks from libuv's thread pool. On a pipe the stream is the cheaper
 *   of the two: no hand-off to a pool thread and back for every chunk (docs/operations.md).
 * - What a kill -9 can lose is what is not yet handed to the kernel: while stdout is read, less
 *   than LOG_BUFFER_BYTES (plus, for a file or a terminal, the write in flight); when nothing
 *   reads stdout, at most LOG_MAX_BUFFERED_BYTES (lines beyond it are dropped and counted, and a
 *   warning says how many: requests never wait for the log).
 * - An orderly stop and a fatal error call `flushLogs` (server.ts, main.ts) which waits for the
 *   kernel to have every line; what is still gathered at exit is written synchronously.
 * - The request log line (app.ts) goes through `requestLoggerFor(log)`: a logger on the same
 *   destination without the redaction paths, because that line is built by the service from
 *   fields that never hold a secret (the URL is redacted before it is logged) and the
 *   wildcard redaction was about half a line's cost in a micro-benchmark. Every other line
 *   keeps the redaction.
 */
import { fstatSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Bytes gathered before a write (sonic-boom minLength; below LOG_WRITE_BYTES). */
export const LOG_BUFFER_BYTES = 2048;
/**
 * Largest single write (sonic-boom maxWrite, default 16 KiB). sonic-boom appends each line to a
 * string and measures its UTF-8 length on every write, so the cost of a line grows with the
 * chunk it joins: in the built server at 50 connections a request line cost 8.7 µs (GET
 * /v1/jobs/{id}) and 5.0 µs (401) with 2-4 KiB chunks, 13 and 11.3 µs with 4-16 KiB ones
 * (docs/operations.md); smaller chunks measured the same as 2-4 KiB.
 */
export const LOG_WRITE_BYTES = 4096;
/** A partial buffer is written at least this often. */
export const LOG_FLUSH_MS = 100;
/** Bytes held while stdout is not read before lines are dropped (and counted). */
export const LOG_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** Keys and Authorization headers never reach a log line (wildcards: any object logged at top level). */
export const REDACT_PATHS = ['req.headers.authorization', '*.secret', '*.apiKey'];

interface Destination extends DestinationStream {
  flush(cb?: (err?: Error) => void): void;
  on(event: 'drop', listener: (data: unknown) => void): this;
}

/**
 * Lines to a non-blocking stream (stdout when it is a pipe or a socket), gathered into chunks of
 * LOG_BUFFER_BYTES or more. A chunk is handed to the stream at once; the stream writes it inline
 * when the pipe has room and queues it otherwise. Lines that would take what the stream holds
 * unwritten past LOG_MAX_BUFFERED_BYTES are dropped and counted (`drop`), as are lines after the
 * reader went away (EPIPE): the service goes on without its log rather than failing requests.
 */
export class StreamDestination {
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  private broken = false;
  /** Chunks handed to the stream whose write has not completed. */
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private dropListeners: ((line: string) => void)[] = [];

  constructor(
    private readonly stream: Writable,
    /** The stream's file descriptor, for the synchronous write of what is left at exit. */
    private readonly fd: number,
    private readonly limits = { bufferBytes: LOG_BUFFER_BYTES, flushMs: LOG_FLUSH_MS, maxBufferedBytes: LOG_MAX_BUFFERED_BYTES },
  ) {
    stream.on('error', () => {
      this.broken = true;
    });
  }

  write(line: string): boolean {
    if (this.broken || this.stream.destroyed || this.stream.writableLength + this.pending.length + line.length > this.limits.maxBufferedBytes) {
      this.drop(line);
      return false;
    }
    this.pending += line;
    if (this.pending.length >= this.limits.bufferBytes) this.hand();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.hand(), this.limits.flushMs);
      this.timer.unref();
    }
    return true;
  }

  on(event: 'drop', listener: (line: string) => void): this {
    if (event === 'drop') this.dropListeners.push(listener);
    return this;
  }

  /** Calls `cb` once every line written so far was handed to the kernel (or could not be). */
  flush(cb?: (err?: Error) => void): void {
    this.hand();
    if (!cb) return;
    if (this.inFlight === 0) process.nextTick(cb);
    else this.waiters.push(() => cb());
  }

  /** At exit: what is gathered, written synchronously when nothing queued would come after it. */
  flushSync(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === '' || this.broken) return;
    const chunk = this.pending;
    this.pending = '';
    if (this.stream.writableLength > 0) {
      this.stream.write(chunk);
      return;
    }
    try {
      writeSync(this.fd, chunk);
    } catch {
      // A full non-blocking pipe (EAGAIN) or a reader gone: these lines are lost with the process.
    }
  }

  private hand(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === '') return;
    const chunk = this.pending;
    this.pending = '';
    if (this.broken) return this.drop(chunk);
    this.inFlight++;
    this.stream.write(chunk, (err) => {
      if (err) {
        this.broken = true;
        this.drop(chunk);
      }
      if (--this.inFlight > 0) return;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    });
  }

  /** Counts the lines of a chunk that will never be written. */
  private drop(chunk: string): void {
    for (const line of chunk.split('\n')) if (line !== '') for (const listener of this.dropListeners) listener(`${line}\n`);
  }
}

/** stdout as a non-blocking stream when it is a pipe or a socket; undefined for files and terminals. */
function stdoutStream(fd: number): Writable | undefined {
  if (fd !== 1) return undefined;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFIFO() && !stat.isSocket()) return undefined;
  } catch {
    return undefined;
  }
  // Node makes stdout on a pipe a libuv stream: writes go out at once when the pipe has room
  // and are queued when it is full (they never block the event loop).
  return process.stdout;
}

interface ServiceLogger {
  log: Logger;
  /** Waits until every line written so far was handed to the kernel. */
  flush(): Promise<void>;
  /** Lines dropped because stdout was not read (LOG_MAX_BUFFERED_BYTES); 0 in normal operation. */
  dropped(): number;
}

const requestLoggers = new WeakMap<Logger, Logger>();
const flushers = new WeakMap<Logger, () => Promise<void>>();
/** Every service logger of this process (flushAllLogs). */
const allFlushers = new Set<() => Promise<void>>();

export function createServiceLogger(level: string, options: { fd?: number } = {}): ServiceLogger {
  const fd = options.fd ?? 1;
  const stream = stdoutStream(fd);
  let dest: Destination;
  if (stream) {
    const streamDest = new StreamDestination(stream, fd);
    process.once('exit', () => streamDest.flushSync());
    dest = streamDest;
  } else {
    dest = pino.destination({
      dest: fd,
      sync: false,
      minLength: LOG_BUFFER_BYTES,
      maxWrite: LOG_WRITE_BYTES,
      periodicFlush: LOG_FLUSH_MS,
      maxLength: LOG_MAX_BUFFERED_BYTES,
    }) as unknown as Destination;
  }
  let dropped = 0;
  let reported = 0;
  dest.on('drop', () => {
    dropped++;
  });
  const base: LoggerOptions = { level };
  const log = pino({ ...base, redact: REDACT_PATHS }, dest);
  requestLoggers.set(log, pino(base, dest));
  // Dropped lines are reported once stdout takes lines again (checked once a second).
  const timer = setInterval(() => {
    if (dropped > reported) {
      const count = dropped;
      log.warn({ droppedLines: count - reported }, 'log lines dropped: stdout was not read fast enough');
      // Counted as reported only if this warning itself was taken.
      if (dropped === count) reported = count;
    }
  }, 1000);
  timer.unref();
  const flush = () =>
    new Promise<void>((resolve) => {
      // The callback runs once the buffer is written (its error is that of the fsync that follows,
      // which pipes and terminals refuse: not a lost line).
      try {
        dest.flush(() => resolve());
      } catch {
        resolve();
      }
    });
  flushers.set(log, flush);
  allFlushers.add(flush);
  return { log, flush, dropped: () => dropped };
}

/**
 * The logger for request log lines: the redaction-free sibling of `log` when `log` came from
 * createServiceLogger, else `log` itself (tests and the CLI pass their own).
 */
export function requestLoggerFor(log: Logger): Logger {
  return requestLoggers.get(log) ?? log;
}

async function withTimeout(work: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

/** Waits (at most `timeoutMs`) until every line of `log` so far is handed to the kernel. */
export async function flushLogs(log: Logger, timeoutMs = 2000): Promise<void> {
  const flush = flushers.get(log);
  if (flush) await withTimeout(flush(), timeoutMs);
}

/** flushLogs for every service logger of the process (the fatal-error exit of main.ts). */
export async function flushAllLogs(timeoutMs = 2000): Promise<void> {
  await withTimeout(Promise.all([...allFlushers].map((flush) => flush())), timeoutMs);
}
