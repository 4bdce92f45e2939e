/**
 * (k) The SDK's complete-output reader (packages/sdk: `jobs.outputDocument`, offsets and digest
 * checked per page, SHA-256 of the whole document, one JSON.parse) on a 16 MiB result, against a
 * bare loop of `fetch` calls over the same pages (each page's JSON parsed for its nextCursor,
 * nothing verified, nothing joined). Both use the same global fetch, one after the other per
 * round against the same service process; ratio = bare time / SDK time (the SDK's page rate as
 * a share of the bare loop's), median over rounds. Goal >= 0.8.
 *
 * Run alone with `node --import tsx bench/sdk-output.ts` (after `npm run build`), or as part of
 * `npm run bench` (BENCH_ONLY=k). BENCH_SDK_ROUNDS (5) sets the rounds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admitOne, median, seedJobTenant, startService } from './jobs-support.js';
import { createClient } from '../packages/sdk/src/node.js';

export interface SdkBenchResult {
  ratio: number;
  goal: number;
  verdict: 'PASS' | 'MISS';
  detail: Record<string, unknown>;
}

const ROUNDS = Number(process.env.BENCH_SDK_ROUNDS ?? 5);

async function bareLoop(base: string, headers: Record<string, string>, jobId: string): Promise<number> {
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `${base}/v1/jobs/${jobId}/output${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`bare page ${pages}: ${res.status}`);
    cursor = ((await res.json()) as { data: { nextCursor: string | null } }).data.nextCursor;
    pages++;
  } while (cursor);
  return pages;
}

async function waitCompleted(base: string, headers: Record<string, string>, jobId: string): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    const body = (await (await fetch(`${base}/v1/jobs/${jobId}`, { headers })).json()) as { data: { status: string } };
    if (body.data.status === 'completed') return;
    if (body.data.status !== 'pending' && body.data.status !== 'processing') throw new Error(`job ${jobId} ${body.data.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} did not complete`);
}

export async function runSdkBench(): Promise<SdkBenchResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'was-bench-sdk-'));
  const svc = await startService('serve', { DATA_DIR: dataDir, ROLE: 'all' });
  try {
    const t = await seedJobTenant(svc.base, 'bench-sdk');
    const jobId = await admitOne(svc.base, t, '[sim:outputBytes=16000000]');
    await waitCompleted(svc.base, t.headers, jobId);
    const sdk = createClient({ baseUrl: svc.base, apiKey: t.secret, workspaceId: t.workspaceId });
    // Warm-up: the service renders the document once; both paths get JIT-compiled.
    await sdk.jobs.outputDocument(jobId);
    await bareLoop(svc.base, t.headers, jobId);
    const bareMs: number[] = [];
    const sdkMs: number[] = [];
    const ratios: number[] = [];
    let pages = 0;
    let bytes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first, so drift in machine load hits both alike.
      const order = round % 2 === 0 ? ['bare', 'sdk'] : ['sdk', 'bare'];
      const times: Record<string, number> = {};
      for (const which of order) {
        const t0 = performance.now();
        if (which === 'bare') pages = await bareLoop(svc.base, t.headers, jobId);
        else {
          const doc = await sdk.jobs.outputDocument(jobId);
          bytes = doc.totalBytes;
          if (doc.pages !== pages && pages) throw new Error(`sdk read ${doc.pages} pages, bare ${pages}`);
        }
        times[which] = performance.now() - t0;
      }
      bareMs.push(times.bare!);
      sdkMs.push(times.sdk!);
      ratios.push(times.bare! / times.sdk!);
    }
    const ratio = median(ratios);
    const result: SdkBenchResult = {
      ratio,
      goal: 0.8,
      verdict: ratio >= 0.8 ? 'PASS' : 'MISS',
      detail: {
        bytes,
        pages,
        rounds: ROUNDS,
        bareMs: +median(bareMs).toFixed(1),
        sdkMs: +median(sdkMs).toFixed(1),
        bareUsPerPage: +((median(bareMs) * 1000) / pages).toFixed(1),
        sdkUsPerPage: +((median(sdkMs) * 1000) / pages).toFixed(1),
        perRound: ratios.map((r) => +r.toFixed(3)),
      },
    };
    return result;
  } finally {
    await svc.child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function reportSdkBench(r: SdkBenchResult): void {
  process.stdout.write(`  (k) SDK jobs.output of a 16 MiB result / bare fetch loop of the same pages: ${r.ratio.toFixed(2)} (goal >= ${r.goal}) ${r.verdict}  ${JSON.stringify(r.detail)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runSdkBench()
    .then(reportSdkBench)
    .catch((err: unknown) => {
      process.stderr.write(`sdk bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    });
}
