import assert from 'node:assert/strict';
/** Helpers for tests that run operations and drive the job worker. */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { JobWorker } from '../../src/worker/job-worker.js';
import { call, type TestContext } from './harness.js';
import type { Tenant } from './seed.js';

export async function run(
  ctx: TestContext,
  t: Pick<Tenant, 'secret' | 'workspace'>,
  operationId: string,
  input: Record<string, unknown>,
  idempotencyKey: string = randomUUID(),
): Promise<LightMyRequestResponse> {
  return call(ctx, 'POST', '/v1/runs', {
    secret: t.secret,
    workspaceId: t.workspace.id,
    headers: { 'idempotency-key': idempotencyKey },
    body: { operationId, input },
  });
}

/** Runs every claimable job to its end in this process. */
export async function drain(ctx: TestContext): Promise<number> {
  return new JobWorker(ctx.deps).runOnce();
}

/** Runs a queued operation whose input makes it fail (a `[sim:fail=…]` directive), drains, and returns the failed job's id. */
export async function failedJob(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, operationId: string, input: Record<string, unknown>): Promise<string> {
  const res = await run(ctx, t, operationId, input);
  assert.equal(res.statusCode, 202, res.body);
  const jobId = res.json().data.jobId as string;
  await drain(ctx);
  assert.equal((await getJob(ctx, t, jobId)).status, 'failed', `${operationId} job failed`);
  return jobId;
}

/** Runs a queued operation (202 asserted), drains, and returns the job as GET /v1/jobs/{id} shows it. */
export async function runQueuedToEnd(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, operationId: string, input: Record<string, unknown>) {
  const res = await run(ctx, t, operationId, input);
  assert.equal(res.statusCode, 202, res.body);
  await drain(ctx);
  return getJob(ctx, t, res.json().data.jobId);
}

export async function getJob(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, jobId: string) {
  const res = await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id });
  if (res.statusCode !== 200) throw new Error(`GET job ${res.statusCode}: ${res.body}`);
  return res.json().data;
}

export async function balance(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>) {
  const res = await call(ctx, 'GET', '/v1/balance', { secret: t.secret, workspaceId: t.workspace.id });
  return res.json().data as { totalMillicents: number; reservedMillicents: number; spendableMillicents: number };
}

/** Reads the complete output through every page, verifying offsets and the digest as Rule 6 says. */
export async function readCompleteOutput(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, jobId: string) {
  const parts: Buffer[] = [];
  let cursor: string | null = null;
  let digest: string | undefined;
  let total = 0;
  let pages = 0;
  let got = 0;
  do {
    const res = await call(ctx, 'GET', `/v1/jobs/${jobId}/output`, { secret: t.secret, workspaceId: t.workspace.id, ...(cursor ? { query: { cursor } } : {}) });
    if (res.statusCode !== 200) throw new Error(`output page ${res.statusCode}: ${res.body}`);
    const page = res.json().data;
    if (page.offsetBytes !== got) throw new Error(`offset ${page.offsetBytes} != ${got}`);
    if (digest !== undefined && page.sha256 !== digest) throw new Error('digest changed between pages');
    if (Buffer.byteLength(page.fragment) > 8192) throw new Error('fragment over 8192 bytes');
    digest = page.sha256;
    total = page.totalBytes;
    const fragment = Buffer.from(page.fragment, 'utf8');
    parts.push(fragment);
    got += fragment.length;
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  const bytes = Buffer.concat(parts);
  return { bytes, total, digest: digest!, pages };
}
