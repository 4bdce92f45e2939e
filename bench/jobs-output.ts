/**
 * (je) Reading a complete job output the way Rule 6 tells a client to: every page in order over
 * one keep-alive connection, offsets checked against the bytes so far, the digest constant, the
 * total and the SHA-256 of the joined bytes verified, then one JSON.parse. Baseline: plain
 * SHA-256 of the same bytes in this process. Ratio = baseline time / read time.
 *
 * The detail also splits a read into its first page (where the service renders the document)
 * and the rest (median page latency), and gives this client's own CPU per page: on a loaded
 * 2-core machine the client competes with the service for the same cores.
 *
 * The floor: the same number of pages read one after another from the bare Fastify route
 * `/bare-page` (an 8192-byte fragment, no work behind it). Rule 6 makes the pages dependent (each
 * cursor comes from the page before), so no server can serve the read faster than that loop;
 * `bestRatio` (sha256 time / floor time) is the highest ratio any implementation could reach
 * on this machine.
 */
import { createHash } from 'node:crypto';
import { Agent, request } from 'undici';
import { median } from './jobs-support.js';

interface Fragment {
  fragment: string;
  offsetBytes: number;
  totalBytes: number;
  sha256: string;
  nextCursor: string | null;
}

interface Read {
  bytes: Buffer;
  pages: number;
  firstPageMs: number;
  /** Latency of every page after the first (ms). */
  restMs: number[];
}

async function readAll(dispatcher: Agent, base: string, headers: Record<string, string>, jobId: string): Promise<Read> {
  const parts: Buffer[] = [];
  let size = 0;
  let digest: string | undefined;
  let total = -1;
  let cursor: string | null = null;
  let pages = 0;
  const latencies: number[] = [];
  do {
    const started = performance.now();
    const url: string = `${base}/v1/jobs/${jobId}/output${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await request(url, { headers, dispatcher });
    if (res.statusCode !== 200) throw new Error(`output page ${pages}: ${res.statusCode} ${await res.body.text()}`);
    const page = ((await res.body.json()) as { data: Fragment }).data;
    latencies.push(performance.now() - started);
    pages++;
    if (page.offsetBytes !== size) throw new Error(`page ${pages}: offset ${page.offsetBytes}, expected ${size}`);
    if (digest !== undefined && (page.sha256 !== digest || page.totalBytes !== total)) throw new Error('digest changed between pages');
    digest = page.sha256;
    total = page.totalBytes;
    const bytes = Buffer.from(page.fragment, 'utf8');
    parts.push(bytes);
    size += bytes.length;
    cursor = page.nextCursor;
  } while (cursor);
  const joined = Buffer.concat(parts, size);
  if (size !== total) throw new Error(`read ${size} bytes, totalBytes ${total}`);
  if (createHash('sha256').update(joined).digest('hex') !== digest) throw new Error('sha256 mismatch');
  JSON.parse(joined.toString('utf8'));
  return { bytes: joined, pages, firstPageMs: latencies[0]!, restMs: latencies.slice(1) };
}

/** `pages` dependent reads of the bare route's output-sized page over one keep-alive connection (ms, median of `repeats`). */
async function floorRead(bareUrl: string, pages: number, repeats: number): Promise<number> {
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  try {
    const url = bareUrl.replace(/\/bare$/, '/bare-page');
    const once = async () => {
      const parts: Buffer[] = [];
      for (let i = 0; i < pages; i++) {
        const res = await request(url, { dispatcher });
        const page = ((await res.body.json()) as { data: { fragment: string } }).data;
        parts.push(Buffer.from(page.fragment, 'utf8'));
      }
      return Buffer.concat(parts);
    };
    await once();
    const ms: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const t0 = performance.now();
      await once();
      ms.push(performance.now() - t0);
    }
    return median(ms);
  } finally {
    await dispatcher.close();
  }
}

export async function measureOutputRead(base: string, headers: Record<string, string>, jobId: string, bareUrl: string, repeats = 3) {
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  try {
    await readAll(dispatcher, base, headers, jobId); // warm-up (JIT, document render)
    const readMs: number[] = [];
    const firstPageMs: number[] = [];
    const pageMs: number[] = [];
    let last: Read | undefined;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < repeats; i++) {
      const t0 = performance.now();
      last = await readAll(dispatcher, base, headers, jobId);
      readMs.push(performance.now() - t0);
      firstPageMs.push(last.firstPageMs);
      pageMs.push(median(last.restMs));
    }
    const cpu = process.cpuUsage(cpu0);
    const shaMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      createHash('sha256').update(last!.bytes).digest('hex');
      shaMs.push(performance.now() - t0);
    }
    const read = median(readMs);
    const sha = median(shaMs);
    const floor = await floorRead(bareUrl, last!.pages, repeats);
    return {
      ratio: sha / read,
      detail: {
        bytes: last!.bytes.length,
        pages: last!.pages,
        readMs: +read.toFixed(1),
        sha256Ms: +sha.toFixed(2),
        usPerPage: +((read * 1000) / last!.pages).toFixed(1),
        firstPageMs: +median(firstPageMs).toFixed(1),
        medianPageUs: +(median(pageMs) * 1000).toFixed(0),
        clientCpuUsPerPage: +((cpu.user + cpu.system) / (repeats * last!.pages)).toFixed(0),
        floorReadMs: +floor.toFixed(1),
        floorUsPerPage: +((floor * 1000) / last!.pages).toFixed(1),
        bestRatio: +(sha / floor).toFixed(3),
      },
    };
  } finally {
    await dispatcher.close();
  }
}
