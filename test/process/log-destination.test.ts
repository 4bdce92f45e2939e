/**
 * The log destination for stdout on a pipe (src/lib/logging.ts StreamDestination), on a real
 * pipe: the stdin of a child process that reads only when told to. Lines are gathered into
 * chunks; a reader that stops reading never makes a write wait; what the pipe cannot take is held
 * up to the cap, beyond it lines are dropped and counted; flush() waits until the kernel has every
 * line; a reader that went away (EPIPE) ends in dropped lines, not an error.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Writable } from 'node:stream';
import { StreamDestination } from '../../src/lib/logging.js';

/** A child that copies its stdin to stdout once it gets SIGUSR2; until then nothing reads the pipe. */
async function gatedReader(): Promise<{ child: ChildProcess; received: () => string; open: () => void; done: Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['-e', "process.stdin.pause(); process.on('SIGUSR2', () => process.stdin.pipe(process.stdout)); process.stderr.write('ready'); const alive = setInterval(() => {}, 1000); process.stdin.on('end', () => clearInterval(alive));"],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const done = new Promise<void>((resolve) => child.on('close', () => resolve()));
  // The SIGUSR2 handler is in place once it says so (the signal would end it before).
  await new Promise<void>((resolve, reject) => {
    child.stderr!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the reader exited (${code})`)));
  });
  return { child, received: () => out, open: () => child.kill('SIGUSR2'), done };
}

const line = (i: number) => `${JSON.stringify({ level: 30, i, msg: 'request completed', pad: 'x'.repeat(200) })}\n`;

function flushed(dest: StreamDestination): Promise<void> {
  return new Promise((resolve) => dest.flush(() => resolve()));
}

describe('log lines to a pipe (StreamDestination)', () => {
  test('a reader that does not read: writes never wait, lines past the cap are dropped and counted, the rest arrive in order once it reads', async () => {
    const reader = await gatedReader();
    const stdin = reader.child.stdin!;
    const dest = new StreamDestination(stdin, -1, { bufferBytes: 2048, flushMs: 50, maxBufferedBytes: 256 * 1024 });
    let dropped = 0;
    dest.on('drop', () => dropped++);
    const N = 5000; // about 1.1 MiB of lines against a 64 KiB pipe and a 256 KiB cap
    const t0 = performance.now();
    let accepted = 0;
    for (let i = 0; i < N; i++) if (dest.write(line(i))) accepted++;
    const elapsed = performance.now() - t0;
    assert.equal(accepted + dropped, N);
    assert.ok(dropped > N / 2, `lines past the cap are dropped (${dropped} of ${N})`);
    assert.ok(elapsed < 5_000, `writing never waited for the reader (${elapsed.toFixed(0)} ms)`);
    assert.ok(stdin.writableLength <= 256 * 1024, `at most the cap is held (${stdin.writableLength})`);
    reader.open();
    await flushed(dest);
    stdin.end();
    await reader.done;
    const got = reader.received().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { i: number });
    assert.equal(got.length, accepted, 'every accepted line arrived, whole');
    // The accepted lines are the first ones: a line is dropped only while the cap is reached.
    assert.deepEqual(got.map((l) => l.i), Array.from({ length: accepted }, (_, i) => i));
  });

  test('lines are gathered into chunks; a partial chunk goes out after the flush interval; flush() waits for the kernel', async () => {
    const reader = await gatedReader();
    reader.open();
    const stdin = reader.child.stdin!;
    let writes = 0;
    const write = stdin.write.bind(stdin);
    stdin.write = ((...args: Parameters<typeof stdin.write>) => {
      writes++;
      return write(...args);
    }) as typeof stdin.write;
    const dest = new StreamDestination(stdin, -1, { bufferBytes: 2048, flushMs: 50, maxBufferedBytes: 1 << 20 });
    for (let i = 0; i < 90; i++) dest.write(line(i)); // about 20 KiB
    assert.ok(writes >= 8 && writes <= 12, `about one write per 2 KiB (${writes})`);
    const before = writes;
    dest.write(line(90));
    assert.equal(writes, before, 'a partial chunk waits');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(writes, before + 1, 'and goes out after the flush interval');
    dest.write(line(91));
    await flushed(dest);
    stdin.end();
    await reader.done;
    assert.equal(reader.received().split('\n').filter(Boolean).length, 92);
  });

  test('a reader that went away (EPIPE): lines are dropped and counted, nothing throws, flush() still returns', async () => {
    const reader = await gatedReader();
    const stdin = reader.child.stdin!;
    reader.child.kill('SIGKILL');
    await reader.done;
    const dest = new StreamDestination(stdin, -1, { bufferBytes: 16, flushMs: 50, maxBufferedBytes: 1 << 20 });
    let dropped = 0;
    dest.on('drop', () => dropped++);
    for (let i = 0; i < 50; i++) dest.write(line(i));
    await flushed(dest);
    // The first writes may be taken before the error arrives; once it has, every line is dropped.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 10; i++) dest.write(line(i));
    assert.ok(dropped >= 10, `${dropped} dropped`);
    await flushed(dest);
  });

  test('a write that fails: the lines of its chunk, those gathered meanwhile and every later line are dropped and counted once', async () => {
    // A stream whose every write fails, as a pipe whose reader went away fails after the check.
    let writes = 0;
    const failing = new Writable({
      write(_chunk, _encoding, cb) {
        writes++;
        setImmediate(() => cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })));
      },
    });
    failing.on('error', () => {});
    const dest = new StreamDestination(failing, -1, { bufferBytes: 1 << 16, flushMs: 10_000, maxBufferedBytes: 1 << 20 });
    let dropped = 0;
    dest.on('drop', () => dropped++);
    for (let i = 0; i < 5; i++) dest.write(line(i));
    const first = flushed(dest); // these 5 are handed to the stream; its write will fail
    for (let i = 5; i < 12; i++) dest.write(line(i)); // gathered while that write is in flight
    await first;
    assert.equal(dropped, 5, 'the failed chunk\'s lines');
    await flushed(dest);
    assert.equal(dropped, 12, 'the lines gathered before the failure was known');
    for (let i = 12; i < 15; i++) assert.equal(dest.write(line(i)), false);
    await flushed(dest);
    assert.deepEqual([dropped, writes], [15, 1], 'later lines at once, and nothing more is written');
  });
});
