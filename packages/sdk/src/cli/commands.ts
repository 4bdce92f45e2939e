/** The commands of was-client other than listen (listen.ts): each takes parsed args, a client and a printer. */
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import { IntegrityError } from '../errors.js';
import type { NodeClient } from '../node.js';
import type { Job, OperationId } from '../types.js';
import { UsageError, type Args } from './args.js';
import { EXIT, type Printer } from './output.js';
import { progressReporter } from './progress.js';

export interface Context {
  args: Args;
  client: NodeClient;
  print: Printer;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  signal: AbortSignal;
}

/** --input '{"…"}' or --input @file.json (or @- for stdin). */
export function readInput(args: Args): Record<string, unknown> {
  const raw = args.flag('input');
  if (raw === undefined) throw new UsageError('--input JSON|@file is required');
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw === '@-' ? 0 : raw.slice(1), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError('--input is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--input must be a JSON object');
  return value as Record<string, unknown>;
}

function one(args: Args, what: string, at = 1): string {
  const value = args.positionals[at];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

const millicents = (n: number) => `${n} millicents ($${(n / 100_000).toFixed(5)})`;

export async function tools(c: Context): Promise<number> {
  const { items } = await c.client.tools.list({ signal: c.signal });
  c.print.result(items, (list: typeof items) =>
    list.flatMap((t) => t.operations.map((o) => `${o.operationId.padEnd(20)} ${o.asynchronous ? 'queued' : 'sync  '} ${String(o.usagePoints).padStart(4)} pts  ${t.name}`)).join('\n'),
  );
  return EXIT.OK;
}

export async function estimate(c: Context): Promise<number> {
  const op = one(c.args, 'operation id (estimate OP --input JSON)');
  const e = await c.client.estimates.create(op as OperationId, readInput(c.args) as never, { signal: c.signal });
  c.print.result(e, (v: typeof e) => `${v.operationId}: estimated ${millicents(v.estimatedCostMillicents)}, at most ${millicents(v.maximumCostMillicents)}, ${v.usagePoints} usage points`);
  return EXIT.OK;
}

export async function usage(c: Context): Promise<number> {
  const u = await c.client.usage.get({ signal: c.signal });
  c.print.result(u, (v: typeof u) =>
    [
      `plan ${v.plan}`,
      `points this minute: ${v.points.minuteUsed}/${v.points.minuteLimit} (resets ${v.points.minuteResetsAt})`,
      `points this month: ${v.points.monthlyUsed}/${v.points.monthlyLimit} (resets ${v.points.monthlyResetsAt})`,
      `streams: ${v.streams.enabled ? `up to ${v.streams.maximum}` : 'not on this plan'}`,
      ...v.budgets.map((b) => `budget ${b.scope}/${b.period}: spent ${b.spentMillicents} + reserved ${b.reservedMillicents} of ${b.limitMillicents} millicents`),
    ].join('\n'),
  );
  return EXIT.OK;
}

export async function balance(c: Context): Promise<number> {
  const b = await c.client.balance.get({}, { signal: c.signal });
  c.print.result(b, (v: typeof b) => `total ${millicents(v.totalMillicents)}\nreserved ${millicents(v.reservedMillicents)}\nspendable ${millicents(v.spendableMillicents)}`);
  return EXIT.OK;
}

async function collect<T>(iterable: AsyncIterable<T>, limit: number | undefined): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (limit !== undefined && out.length >= limit) break;
  }
  return out;
}

export async function transactions(c: Context): Promise<number> {
  const limit = c.args.int('limit', 1, 100_000) ?? (c.args.bool('all') ? undefined : 25);
  const items = await collect(c.client.transactions.iterate({ limit: Math.min(limit ?? 100, 100) }), limit);
  c.print.result(items, (list: typeof items) => list.map((t) => `${t.createdAt} ${t.type.padEnd(10)} ${String(t.amountMillicents).padStart(12)} ${t.toolSlug ?? ''} ${t.jobId ?? ''}`).join('\n') || '(no transactions)');
  return EXIT.OK;
}

const COST_GROUPS = ['operationId', 'keyId', 'executionOrigin'] as const;
type CostGroup = (typeof COST_GROUPS)[number];

/** Rows of text as a table: columns padded to their widest cell; numbers right-aligned. */
export function table(header: string[], rows: string[][], numeric: ReadonlySet<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** `costs [--by hour|day|month] [--group operationId,keyId,executionOrigin] [--from T] [--to T]` (GET /v1/costs). */
export async function costs(c: Context): Promise<number> {
  const by = c.args.flag('by') ?? 'day';
  if (by !== 'hour' && by !== 'day' && by !== 'month') throw new UsageError('--by must be hour, day or month');
  const groups = c.args.list('group') ?? [];
  for (const g of groups) if (!(COST_GROUPS as readonly string[]).includes(g)) throw new UsageError(`--group must be among ${COST_GROUPS.join(', ')} (got ${g})`);
  const report = await c.client.costs.list(
    { bucket: by, groupBy: groups as CostGroup[], ...(c.args.flag('from') ? { from: c.args.flag('from') } : {}), ...(c.args.flag('to') ? { to: c.args.flag('to') } : {}) },
    { signal: c.signal },
  );
  c.print.result(report, (r: typeof report) => {
    const cols = r.groupBy as CostGroup[];
    const label = (iso: string) => (by === 'hour' ? iso.slice(0, 16).replace('T', ' ') : by === 'day' ? iso.slice(0, 10) : iso.slice(0, 7));
    const rows = r.buckets.flatMap((b) => b.lines.map((l) => [label(b.start), l.type, ...cols.map((g) => l[g] ?? '-'), String(l.costMillicents), String(l.entries)]));
    rows.push(['total', '', ...cols.map(() => ''), String(r.totals.costMillicents), String(r.totals.lines.reduce((n, l) => n + l.entries, 0))]);
    const header = [by, 'type', ...cols, 'costMillicents', 'entries'];
    const numeric = new Set([header.length - 2, header.length - 1]);
    return `${table(header, rows, numeric)}\n${r.from} – ${r.to} (UTC); ${millicents(r.totals.costMillicents)}`;
  });
  return EXIT.OK;
}

/** `run OP --input JSON|@file [--wait | --stream] [--out FILE] [--idempotency-key K]` */
export async function run(c: Context): Promise<number> {
  const op = one(c.args, 'operation id (run OP --input JSON)') as OperationId;
  const input = readInput(c.args);
  if (c.args.bool('stream')) return runStreamed(c, op, input);
  const wait = c.args.bool('wait') || c.args.flag('out') !== undefined;
  const key = c.args.flag('idempotency-key');
  const created = await c.client.runs.create(op, input as never, { signal: c.signal, ...(key ? { idempotencyKey: key } : {}) });
  if (created.kind === 'result') {
    if (c.args.flag('out')) await writeOutput(c, created.jobId, c.args.flag('out')!);
    c.print.result(created, (v: typeof created) => `${v.status} (cost ${millicents(v.costMillicents)})${v.errorCode ? ` error ${v.errorCode}` : ''}\n${JSON.stringify(v.result, null, 2)}`);
    return created.status === 'completed' ? EXIT.OK : EXIT.JOB_UNSUCCESSFUL;
  }
  if (!wait) {
    c.print.result(created, (v: typeof created) => `job ${v.jobId} ${v.status} (at most ${millicents(v.maximumCostMillicents)})`);
    return EXIT.OK;
  }
  return waitAndReport(c, created.jobId);
}

/**
 * `run OP --stream`: the reply's text on stdout as it is generated (JSON lines `{type: "delta",
 * text}` and then the result event with --json), then the outcome on stderr. Interrupting the
 * command closes the stream, which stops the run (its job is cancelled, charged what was consumed).
 */
async function runStreamed(c: Context, op: OperationId, input: Record<string, unknown>): Promise<number> {
  const key = c.args.flag('idempotency-key');
  let streamed = false;
  for await (const event of c.client.runs.stream(op, input as never, { signal: c.signal, ...(key ? { idempotencyKey: key } : {}) })) {
    if (event.type === 'delta') {
      streamed = true;
      if (c.print.json) c.print.line(event, event.text);
      else c.print.text(event.text);
      continue;
    }
    const data = event.data;
    if (c.print.json) c.print.line(event, '');
    else {
      if (streamed) c.print.text('\n');
      c.print.note(`${event.job.status} (job ${event.job.id}, cost ${millicents(event.job.costMillicents)})${event.job.errorCode ? ` error ${event.job.errorCode}` : ''}`);
      if (data.kind === 'result' && !streamed && data.result !== null) c.print.result(data.result);
    }
    return event.job.status === 'completed' || data.kind === 'job' ? EXIT.OK : EXIT.JOB_UNSUCCESSFUL;
  }
  return EXIT.UNEXPECTED;
}

async function waitAndReport(c: Context, jobId: string): Promise<number> {
  const progress = progressReporter(c.stderr, jobId, c.print.json);
  let job: Job;
  try {
    job = await c.client.jobs.wait(jobId, { signal: c.signal, onProgress: (j) => progress.update(j) });
  } finally {
    progress.done();
  }
  let result: unknown = null;
  if (job.status === 'completed') {
    const out = c.args.flag('out');
    result = out ? await writeOutput(c, jobId, out) : await c.client.jobs.output(jobId, { signal: c.signal });
  }
  const summary = { jobId, status: job.status, costMillicents: job.costMillicents, errorCode: job.errorCode, result };
  c.print.result(summary, (v: typeof summary) =>
    [`job ${v.jobId} ${v.status}, cost ${millicents(v.costMillicents)}${v.errorCode ? `, error ${v.errorCode}` : ''}`, ...(v.result !== null ? [JSON.stringify(v.result, null, 2)] : [])].join('\n'),
  );
  return job.status === 'completed' ? EXIT.OK : EXIT.JOB_UNSUCCESSFUL;
}

/** Every file reference (`{mediaId, url, …}`) inside a result. */
function fileReferences(value: unknown, out: { mediaId: string; url: string; name?: string; sha256?: string; mimeType?: string }[] = []) {
  if (Array.isArray(value)) for (const v of value) fileReferences(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.mediaId === 'string' && typeof o.url === 'string') {
      out.push({ mediaId: o.mediaId, url: o.url, ...(typeof o.name === 'string' ? { name: o.name } : {}), ...(typeof o.sha256 === 'string' ? { sha256: o.sha256 } : {}) });
    } else for (const v of Object.values(o)) fileReferences(v, out);
  }
  return out;
}

/** Downloads a signed URL to `path`, checking the sha256 when one is known. */
async function download(url: string, path: string, sha256: string | undefined, signal: AbortSignal): Promise<number> {
  const res = await fetch(url, { signal });
  if (!res.ok || !res.body) throw new Error(`download ${url.split('?')[0]}: HTTP ${res.status}`);
  const hash = createHash('sha256');
  let size = 0;
  const source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  source.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
  });
  await pipeline(source, createWriteStream(path));
  const actual = hash.digest('hex');
  if (sha256 && actual !== sha256) throw new IntegrityError(`${path}: sha256 ${actual}, expected ${sha256}`, sha256, actual);
  return size;
}

/** Writes the verified complete output to `file` and each produced file beside it; returns the result. */
async function writeOutput(c: Context, jobId: string, file: string): Promise<unknown> {
  const doc = await c.client.jobs.outputDocument(jobId, { signal: c.signal });
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, doc.text);
  const refs = fileReferences(doc.result);
  for (const ref of refs) {
    const target = join(dirname(file), `${ref.mediaId}-${basename(ref.name ?? 'file')}`);
    const size = await download(ref.url, target, ref.sha256, c.signal);
    c.print.note(`wrote ${target} (${size} bytes)`);
  }
  c.print.note(`wrote ${file} (${doc.totalBytes} bytes, sha256 ${doc.sha256} verified)`);
  return doc.result;
}

export async function jobs(c: Context): Promise<number> {
  const verb = c.args.positionals[1];
  switch (verb) {
    case 'list': {
      const page = await c.client.jobs.list({ limit: c.args.int('limit', 1, 100), ...(c.args.flag('cursor') ? { cursor: c.args.flag('cursor')! } : {}) }, { signal: c.signal });
      c.print.result(page, (p: typeof page) => [...p.items.map((j) => `${j.id} ${j.operationId.padEnd(18)} ${j.status.padEnd(10)} ${j.createdAt}`), ...(p.nextCursor ? [`next: --cursor ${p.nextCursor}`] : [])].join('\n') || '(no jobs)');
      return EXIT.OK;
    }
    case 'get': {
      const job = await c.client.jobs.get(one(c.args, 'job id', 2), { signal: c.signal });
      c.print.result(job);
      return EXIT.OK;
    }
    case 'cancel': {
      const job = await c.client.jobs.cancel(one(c.args, 'job id', 2), { signal: c.signal });
      c.print.result(job, (j: typeof job) => `job ${j.id} ${j.status}`);
      return EXIT.OK;
    }
    case 'retry': {
      const jobId = one(c.args, 'job id', 2);
      const key = c.args.flag('idempotency-key');
      const queued = await c.client.jobs.retry(jobId, { signal: c.signal, ...(key ? { idempotencyKey: key } : {}) });
      if (c.args.bool('wait')) return waitAndReport(c, jobId);
      c.print.result(queued, (q: typeof queued) => `job ${q.jobId} ${q.status} (at most ${millicents(q.maximumCostMillicents)})`);
      return EXIT.OK;
    }
    case 'wait':
      return waitAndReport(c, one(c.args, 'job id', 2));
    case 'output': {
      const jobId = one(c.args, 'job id', 2);
      const out = c.args.flag('out');
      if (out) {
        const result = await writeOutput(c, jobId, out);
        if (c.print.json) c.print.result(result);
        return EXIT.OK;
      }
      // The reader always checks offsets and sha256; --verify also reports what was verified.
      const doc = await c.client.jobs.outputDocument(jobId, { signal: c.signal });
      if (c.args.bool('verify')) {
        const report = { jobId, verified: true, totalBytes: doc.totalBytes, sha256: doc.sha256, pages: doc.pages, restarts: doc.restarts };
        c.print.result(report, (r: typeof report) => `verified: ${r.totalBytes} bytes in ${r.pages} pages, sha256 ${r.sha256}${r.restarts ? ` (${r.restarts} restarts)` : ''}`);
      } else c.print.result(doc.result);
      return EXIT.OK;
    }
    default:
      throw new UsageError('jobs list|get|cancel|retry|wait|output');
  }
}

export async function media(c: Context): Promise<number> {
  const verb = c.args.positionals[1];
  switch (verb) {
    case 'list': {
      const page = await c.client.media.list({ limit: c.args.int('limit', 1, 100), ...(c.args.flag('cursor') ? { cursor: c.args.flag('cursor')! } : {}) }, { signal: c.signal });
      c.print.result(page, (p: typeof page) => [...p.items.map((m) => `${m.id} ${m.mimeType.padEnd(18)} ${String(m.sizeBytes).padStart(10)} ${m.name}`), ...(p.nextCursor ? [`next: --cursor ${p.nextCursor}`] : [])].join('\n') || '(no media)');
      return EXIT.OK;
    }
    case 'upload': {
      const path = one(c.args, 'file path', 2);
      const type = c.args.flag('type');
      const name = c.args.flag('name');
      const item = await c.client.media.upload(path, { signal: c.signal, ...(type ? { mimeType: type } : {}), ...(name ? { name } : {}) });
      c.print.result(item, (m: typeof item) => `uploaded ${m.id} ${m.mimeType} ${m.sizeBytes} bytes (sha256 ${m.sha256} verified)`);
      return EXIT.OK;
    }
    case 'download': {
      const mediaId = one(c.args, 'media id', 2);
      const item = await c.client.media.get(mediaId, { signal: c.signal });
      const { url } = await c.client.media.downloadUrl(mediaId, { signal: c.signal });
      const target = c.args.flag('out') ?? basename(item.name || mediaId);
      const size = await download(url, target, item.sha256, c.signal);
      const report = { mediaId, path: target, sizeBytes: size, sha256: item.sha256 };
      c.print.result(report, (r: typeof report) => `wrote ${r.path} (${r.sizeBytes} bytes, sha256 verified)`);
      return EXIT.OK;
    }
    default:
      throw new UsageError('media upload|download|list');
  }
}

/** `events tail [--types a,b] [--follow] [--cursor C] [--limit N]`: one line per event. */
export async function events(c: Context): Promise<number> {
  if (c.args.positionals[1] !== 'tail') throw new UsageError('events tail [--types …] [--follow]');
  const types = c.args.list('types');
  const cursor = c.args.flag('cursor');
  let last: string | undefined = cursor;
  try {
    for await (const page of c.client.events.pages({ follow: c.args.bool('follow'), signal: c.signal, ...(types ? { types } : {}), ...(cursor ? { cursor } : {}), limit: 100 })) {
      for (const e of page.items) c.print.line(e, `${e.createdAt} ${e.type.padEnd(16)} ${e.id}${eventSubject(e)}`);
      last = page.nextCursor;
    }
  } catch (err) {
    if (!c.signal.aborted) throw err;
  }
  if (last && !c.print.json) c.print.note(`resume with --cursor ${last}`);
  return EXIT.OK;
}

export function eventSubject(e: { data: unknown }): string {
  const data = e.data as { job?: { id?: string; status?: string }; media?: { id?: string } };
  if (data?.job?.id) return ` job ${data.job.id}`;
  if (data?.media?.id) return ` media ${data.media.id}`;
  return '';
}

/** trigger TYPE: a sample event to the test webhooks (test keys only), as `stripe trigger` does. */
export async function trigger(c: Context): Promise<number> {
  const type = one(c.args, 'event type (trigger TYPE, e.g. job.completed)');
  const sent = await c.client.testHelpers.triggerEvent(type, { signal: c.signal });
  c.print.result(sent, (v: typeof sent) => `sent ${v.event.type} ${v.event.id} to ${v.deliveries} test webhook${v.deliveries === 1 ? '' : 's'}`);
  return EXIT.OK;
}
