/**
 * was-client (packages/sdk/src/cli) against the built server as a process: `run --wait` without a
 * terminal (plain progress lines on stderr, the result on stdout), `--out` with produced files,
 * `--json` everywhere, jobs output --verify, media upload and download, events tail, the
 * documented exit codes, and `listen` (test/support/sdk-listen.ts, on the same server). The binary
 * is spawned where the process matters (no terminal, exit status, kill and restart); the other
 * commands run their command line in this process (test/support/sdk.ts `runCli`), which saves a
 * Node start-up per command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminPost } from '../support/processes.js';
import { png } from '../support/media.js';
import { CLI_MAIN, cli, describeEachServer, runCli, spawnCli } from '../support/sdk.js';
import { freePort } from '../support/free-port.js';
import { progressReporter } from '../../packages/sdk/src/cli/progress.js';
import type { Job } from '../../packages/sdk/src/types.js';
import { listenTest } from '../support/sdk-listen.js';
import { waitUntil } from '../support/wait.js';
import { needsProgram } from '../support/requirements.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** util-linux `script`, which runs a command on a pseudo-terminal (absent on some machines: the terminal test is skipped there). */
const scriptMissing = needsProgram('script', ['--version'], 'bsdutils (util-linux script)');

/**
 * A proxy in front of the service that changes output pages in transit: every page read with a
 * cursor (the second and later) claims one byte more in offsetBytes than it should.
 */
async function tamperingProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !['host', 'connection', 'content-length', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value;
    const up = await fetch(`${upstream}${req.url}`, { method: req.method!, headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    let body = Buffer.from(await up.arrayBuffer());
    if (up.status === 200 && /^\/v1\/jobs\/[^/]+\/output\?(.*&)?cursor=/.test(req.url!)) {
      const page = JSON.parse(body.toString('utf8')) as { data: { offsetBytes: number } };
      page.data.offsetBytes += 1;
      body = Buffer.from(JSON.stringify(page));
    }
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const job = (status: string, percentage: number) => ({ status, progress: { percentage } }) as Job;

test('the progress bar of run --wait on a terminal: one line redrawn with \\r (status, 30-cell bar, percentage), ended by a newline; plain lines per status or ten percent without a terminal', () => {
  let tty = '';
  const terminal = Object.assign(new PassThrough(), { isTTY: true });
  terminal.on('data', (c: Buffer) => (tty += c.toString()));
  const bar = progressReporter(terminal, 'j1', false);
  for (const [status, pct] of [['pending', 0], ['processing', 40], ['processing', 41.6], ['completed', 100]] as const) bar.update(job(status, pct));
  bar.done();
  assert.equal(
    tty,
    `\rpending    [${'-'.repeat(30)}]   0%\rprocessing [${'#'.repeat(12)}${'-'.repeat(18)}]  40%\rprocessing [${'#'.repeat(13)}${'-'.repeat(17)}]  42%\rcompleted  [${'#'.repeat(30)}] 100%\n`,
  );
  let plain = '';
  const pipe = new PassThrough();
  pipe.on('data', (c: Buffer) => (plain += c.toString()));
  const lines = progressReporter(pipe, 'j1', false);
  for (const [status, pct] of [['pending', 0], ['processing', 40], ['processing', 41.6], ['processing', 55], ['completed', 100]] as const) lines.update(job(status, pct));
  lines.done();
  assert.equal(plain, 'job j1 pending 0%\njob j1 processing 40%\njob j1 processing 55%\njob j1 completed 100%\n', 'no line for a change inside the same ten percent');
  let json = '';
  const jsonPipe = Object.assign(new PassThrough(), { isTTY: true });
  jsonPipe.on('data', (c: Buffer) => (json += c.toString()));
  const jsonLines = progressReporter(jsonPipe, 'j1', true);
  jsonLines.update(job('processing', 50));
  assert.deepEqual(JSON.parse(json), { type: 'progress', jobId: 'j1', status: 'processing', percentage: 50 }, '--json prints JSON lines even on a terminal');
});

describeEachServer('was-client', (get) => {
  test('run --wait without a terminal: plain progress lines on stderr, then status, cost and the result on stdout; exit 0', async () => {
    const { env } = get();
    const r = await cli(['run', 'image.generate', '--input', '{"prompt":"a kite [sim:delay=400] [sim:steps=4]"}', '--wait'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.ok(lines.length >= 2, r.stderr);
    for (const line of lines) assert.match(line, /^job [0-9a-f-]{36} (pending|processing|completed) \d+%$/, 'plain lines, no terminal control characters');
    assert.ok(lines.some((l) => / processing /.test(l)), r.stderr);
    assert.match(r.stdout, /^job [0-9a-f-]{36} completed, cost \d+ millicents/);
    const result = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n') + 1));
    assert.ok(result.images.length >= 1);
  });

  test('run --wait --json: one JSON document on stdout, JSON progress lines on stderr', async () => {
    const { env } = get();
    const r = await runCli(['run', 'image.generate', '--input', '{"prompt":"x [sim:delay=100]"}', '--wait', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.status, 'completed');
    assert.ok(out.costMillicents > 0);
    assert.equal(out.result.images[0].mimeType, 'image/png');
    for (const line of r.stderr.trim().split('\n')) assert.equal(JSON.parse(line).type, 'progress');
  });

  test('run --out writes the verified output and downloads the produced files (sha256 checked); jobs output --verify reports the check', async () => {
    const { env } = get();
    const dir = mkdtempSync(join(tmpdir(), 'was-cli-out-'));
    try {
      const input = join(dir, 'input.json');
      writeFileSync(input, JSON.stringify({ prompt: 'y [sim:outputBytes=30000]', count: 2 }));
      const r = await runCli(['run', 'image.generate', '--input', `@${input}`, '--out', join(dir, 'result.json'), '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      const text = readFileSync(join(dir, 'result.json'), 'utf8');
      assert.deepEqual(JSON.parse(text), out.result);
      const files = readdirSync(dir).filter((f) => f.endsWith('.png'));
      assert.equal(files.length, 2);
      for (const image of out.result.images) {
        const file = files.find((f) => f.startsWith(image.mediaId))!;
        assert.equal(sha256(readFileSync(join(dir, file))), image.sha256);
      }
      const verified = await runCli(['jobs', 'output', out.jobId, '--verify', '--json'], env);
      assert.equal(verified.code, 0, verified.stderr);
      const report = JSON.parse(verified.stdout);
      assert.equal(report.verified, true);
      assert.equal(report.totalBytes, Buffer.byteLength(text));
      assert.ok(report.pages >= 4);
      const human = await runCli(['jobs', 'output', out.jobId, '--verify'], env);
      assert.match(human.stdout, /^verified: \d+ bytes in \d+ pages, sha256 [0-9a-f]{64}\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('media upload, list and download (sha256 checked both ways); tools, estimate, usage, balance, transactions, jobs list, events tail with --json', async () => {
    const { env } = get();
    const dir = mkdtempSync(join(tmpdir(), 'was-cli-media-'));
    try {
      const bytes = await png(6, 6);
      writeFileSync(join(dir, 'dot.png'), bytes);
      const up = await runCli(['media', 'upload', join(dir, 'dot.png'), '--json'], env);
      assert.equal(up.code, 0, up.stderr);
      const item = JSON.parse(up.stdout);
      assert.equal(item.sha256, sha256(bytes));
      const list = JSON.parse((await runCli(['media', 'list', '--json'], env)).stdout);
      assert.ok(list.items.some((m: { id: string }) => m.id === item.id));
      const down = await runCli(['media', 'download', item.id, '--out', join(dir, 'copy.png'), '--json'], env);
      assert.equal(down.code, 0, down.stderr);
      assert.deepEqual(readFileSync(join(dir, 'copy.png')), bytes);

      const tools = JSON.parse((await runCli(['tools', '--json'], env)).stdout);
      assert.ok(tools.some((t: { operations: { operationId: string }[] }) => t.operations.some((o) => o.operationId === 'link.preview')));
      const estimate = JSON.parse((await runCli(['estimate', 'image.generate', '--input', '{"prompt":"p"}', '--json'], env)).stdout);
      assert.equal(estimate.operationId, 'image.generate');
      assert.equal(JSON.parse((await runCli(['usage', '--json'], env)).stdout).plan, 'pro');
      assert.ok(JSON.parse((await runCli(['balance', '--json'], env)).stdout).totalMillicents > 0);
      assert.ok(Array.isArray(JSON.parse((await runCli(['transactions', '--json'], env)).stdout)));
      assert.ok(JSON.parse((await runCli(['jobs', 'list', '--json'], env)).stdout).items.length > 0);
      // On PostgreSQL the feed shows an event once every transaction that began before its own
      // has ended, in any database of the cluster (docs/decisions.md, "Event feed order is commit-safe"): other
      // tests' open transactions on the shared server can hold it back a while, so the tail is
      // read until the upload's event shows (the feed is complete, not instantaneous).
      const tailEvents = async () => {
        const tail = await runCli(['events', 'tail', '--types', 'media.created', '--json'], env);
        assert.equal(tail.code, 0, tail.stderr);
        return (tail.stdout.trim() === '' ? [] : tail.stdout.trim().split('\n').map((l) => JSON.parse(l))) as { type: string; data: { media: { id: string } } }[];
      };
      const events = await waitUntil(tailEvents, (list) => list.some((e) => e.data.media.id === item.id), "the upload's media.created in the feed", 60_000, 250);
      assert.ok(events.length >= 1 && events.every((e) => e.type === 'media.created'));
      assert.ok(events.some((e) => e.data.media.id === item.id), 'the upload\'s media.created is in the feed');
      const human = await runCli(['events', 'tail', '--types', 'media.created'], env);
      assert.match(human.stdout, /media\.created +[0-9a-f-]{36} media /);
      assert.match(human.stderr, /resume with --cursor /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the binary exits with the documented codes: 2 without configuration, 4 with a bad key, 0 for help', async () => {
    const { env } = get();
    const [missing, badKey, help] = await Promise.all([
      cli(['tools'], { SERVICE_URL: env.SERVICE_URL! }),
      cli(['usage', '--json'], { ...env, SERVICE_API_KEY: 'wask_not_a_key' }),
      cli(['--help'], {}),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing configuration: SERVICE_API_KEY \(--api-key\), SERVICE_WORKSPACE \(--workspace\)/);
    assert.equal(badKey.code, 4);
    assert.equal(JSON.parse(badKey.stderr).error.code, 'UNAUTHENTICATED');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: was-client/);
  });

  test('exit codes: 2 usage, 3 refused, 4 authentication, 5 not found, 6 limited, 7 job failed, 9 unavailable; errors as JSON on stderr with --json', async () => {
    const { env, server, tenant } = get();
    assert.equal((await runCli(['tools'], { SERVICE_URL: env.SERVICE_URL! })).code, 2, 'missing key and workspace');
    assert.equal((await runCli(['frobnicate'], env)).code, 2);
    assert.equal((await runCli(['run', 'image.generate'], env)).code, 2, 'no --input');
    assert.equal((await runCli(['run', 'image.generate', '--input', '{oops'], env)).code, 2);
    assert.equal((await runCli(['help'], {})).code, 0);
    const invalid = await runCli(['estimate', 'image.generate', '--input', '{"prompt":""}', '--json'], env);
    assert.equal(invalid.code, 3);
    assert.equal(JSON.parse(invalid.stderr).error.code, 'INVALID_INPUT');
    const badKey = await runCli(['usage', '--json'], { ...env, SERVICE_API_KEY: 'wask_not_a_key' });
    assert.equal(badKey.code, 4);
    assert.equal(JSON.parse(badKey.stderr).error.status, 401);
    assert.ok(JSON.parse(badKey.stderr).error.requestId);
    const missing = await runCli(['jobs', 'get', '00000000-0000-4000-8000-000000000000'], env);
    assert.equal(missing.code, 5);
    assert.match(missing.stderr, /^was-client: .+\(request .+\)\n$/);
    const failed = await runCli(['run', 'image.generate', '--input', '{"prompt":"x [sim:fail=PROVIDER_ERROR]"}', '--wait', '--json'], env);
    assert.equal(failed.code, 7, failed.stderr);
    assert.equal(JSON.parse(failed.stdout).errorCode, 'PROVIDER_ERROR');
    const closed = await freePort();
    const down = await runCli(['usage', '--retries', '0'], { ...env, SERVICE_URL: `http://127.0.0.1:${closed}` });
    assert.equal(down.code, 9, down.stderr);
    // 429 last: the workspace's minute budget is made tiny.
    await adminPost(server.base, `/admin/v1/workspaces/${tenant.workspaceId}/settings`, { limits: { pointsPerMinute: 1 } });
    let limited: number | null = 0;
    for (let i = 0; i < 3 && limited !== 6; i++) limited = (await runCli(['usage', '--retries', '0'], env)).code;
    assert.equal(limited, 6);
    await adminPost(server.base, `/admin/v1/workspaces/${tenant.workspaceId}/settings`, { limits: { pointsPerMinute: 100_000 } });
  });

  test('run --wait on a terminal (a pseudo-terminal from util-linux script): the bar is redrawn in place and ends at completed 100%, then the result', { skip: scriptMissing }, async () => {
    const { env } = get();
    const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, CLI_MAIN, 'run', 'image.generate', '--input', '{"prompt":"a kite [sim:delay=400] [sim:steps=4]"}', '--wait'].map(quote).join(' ');
    const child = spawn('script', ['-qefc', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), TERM: 'dumb', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, out);
    const bars = [...out.matchAll(/\r(pending|processing|completed) +\[([#-]{30})\] +(\d+)%/g)];
    assert.ok(bars.length >= 1, `a bar drawn with \\r: ${JSON.stringify(out)}`);
    assert.deepEqual(bars.at(-1)!.slice(1), ['completed', '#'.repeat(30), '100'], 'the last drawing is the full bar');
    assert.doesNotMatch(out, /^job [0-9a-f-]{36} (pending|processing) \d+%/m, 'no plain progress lines on a terminal');
    assert.match(out, /100%\r?\njob [0-9a-f-]{36} completed, cost \d+ millicents/, 'a newline ends the bar before the summary');
  });

  test('exit code 8: a corrupt output page (offsetBytes tampered in transit by a proxy) fails verification; exit 1 for an unexpected error; exit 130 on Ctrl-C while waiting', async () => {
    const { env } = get();
    const made = await runCli(['run', 'image.generate', '--input', '{"prompt":"pages [sim:outputBytes=30000]"}', '--wait', '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const jobId = JSON.parse(made.stdout).jobId as string;
    const proxy = await tamperingProxy(env.SERVICE_URL!);
    try {
      const tampered = await runCli(['jobs', 'output', jobId, '--verify', '--json'], { ...env, SERVICE_URL: proxy.url });
      assert.equal(tampered.code, 8, tampered.stderr);
      const error = JSON.parse(tampered.stderr).error;
      assert.equal(error.code, 'IntegrityError');
      assert.match(error.message, /offsetBytes/);
      assert.equal(tampered.stdout, '', 'nothing printed as verified');
      const human = await runCli(['jobs', 'output', jobId], { ...env, SERVICE_URL: proxy.url });
      assert.equal(human.code, 8);
      const direct = await runCli(['jobs', 'output', jobId, '--verify'], env);
      assert.equal(direct.code, 0, 'the same output read directly verifies');
    } finally {
      await proxy.close();
    }

    // 1: an error that is none of the documented kinds (the --out target is a directory).
    const dir = mkdtempSync(join(tmpdir(), 'was-cli-exit1-'));
    try {
      mkdirSync(join(dir, 'taken'));
      const unexpected = await runCli(['jobs', 'output', jobId, '--out', join(dir, 'taken')], env);
      assert.equal(unexpected.code, 1, unexpected.stderr);
      assert.match(unexpected.stderr, /EISDIR/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // 130: SIGINT while `jobs wait` follows a job that runs for ten minutes; the gate is its first progress line.
    const long = await runCli(['run', 'image.generate', '--input', '{"prompt":"slow [sim:delay=600000]"}', '--json'], env);
    assert.equal(long.code, 0, long.stderr);
    const longId = JSON.parse(long.stdout).jobId as string;
    const waiting = spawnCli(['jobs', 'wait', longId], env);
    let stderr = '';
    const firstLine = new Promise<void>((resolve) => waiting.stderr!.setEncoding('utf8').on('data', (c: string) => ((stderr += c), stderr.includes('\n') && resolve())));
    const exited = new Promise<number | null>((resolve) => waiting.on('exit', (code) => resolve(code)));
    await firstLine;
    assert.match(stderr, new RegExp(`^job ${longId} (pending|processing) \\d+%\n`));
    waiting.kill('SIGINT');
    assert.equal(await exited, 130);
    assert.equal((await runCli(['jobs', 'cancel', longId], env)).code, 0);
  });

  test('listen forwards job events signed like real webhooks; after kill -9 and a restart it continues without loss or duplicates', () => listenTest(get()));
});
