/**
 * Load for the fault tests (issue 32: PostgreSQL restarts, API processes killed mid-admission): a
 * client that starts queued runs over real sockets and behaves as the contract asks of one. Each
 * run has its own Idempotency-Key, sent again, unchanged, until an answer acknowledges the run
 * (202, first or replayed), on whichever API process is up. Everything a careful client could hold
 * against the service is collected in `problems`: an answer outside the documented ones (a 500, a
 * 503 without its code or Retry-After), a request with no answer by its deadline (a hang), or one
 * Idempotency-Key acknowledged with two different jobs. `admissionProblems` then compares the
 * database with what the client was told: every acknowledged run exists, no job was made that the
 * client was not told of, one job per key, a hold for every job and a job for every hold.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';

export interface RunLoadOptions {
  /** The API processes' base URLs now (a killed one may be missing or refuse connections). */
  bases(): string[];
  headers: Record<string, string>;
  body(i: number): unknown;
  /** An answer later than this is a hang. */
  deadlineMs: number;
  /** Whether a refused or cut connection is expected (a killed process) rather than a problem. */
  connectionErrorsExpected: boolean;
}

export interface Answer {
  status: number;
  code?: string;
  retryAfter: string | null;
  ms: number;
}

export class RunLoad {
  /** Idempotency-Key → the job the service acknowledged for it. */
  readonly acked = new Map<string, string>();
  readonly answers: Answer[] = [];
  readonly problems: string[] = [];
  connectionErrors = 0;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private gate: Promise<void> | undefined;
  private openGate: () => void = () => {};

  constructor(private readonly options: RunLoadOptions) {}

  /** Starts `writers` loops, each starting one run after another. */
  start(writers: number): void {
    for (let w = 0; w < writers; w++) this.loops.push(this.loop(w));
  }

  /** Lets each loop finish the run it is on (acknowledged), then resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.resume();
    await Promise.all(this.loops);
  }

  /** Starts no new run (runs already started go on until acknowledged) until `resume()`. */
  pause(): void {
    this.gate ??= new Promise((resolve) => (this.openGate = resolve));
  }

  resume(): void {
    this.openGate();
    this.gate = undefined;
  }

  count(status: number): number {
    return this.answers.filter((a) => a.status === status).length;
  }

  private async loop(writer: number): Promise<void> {
    while (!this.stopping) {
      if (this.gate) await this.gate;
      if (this.stopping) break;
      await this.runUntilAcknowledged(this.next++, writer);
    }
  }

  /** One run: the same key and body again until a 202 comes back. */
  async runUntilAcknowledged(i: number, writer = 0): Promise<string> {
    const key = randomUUID();
    const body = JSON.stringify(this.options.body(i));
    for (let attempt = 0; ; attempt++) {
      const bases = this.options.bases();
      const base = bases[(writer + attempt) % bases.length]!;
      const started = Date.now();
      let res: Response;
      let parsed: any;
      try {
        res = await fetch(`${base}/v1/runs`, {
          method: 'POST',
          headers: { ...this.options.headers, 'content-type': 'application/json', 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(this.options.deadlineMs),
        });
        const text = await res.text();
        parsed = text ? JSON.parse(text) : undefined;
      } catch (err) {
        const e = err as Error;
        if (e.name === 'TimeoutError') this.problems.push(`POST /v1/runs on ${base}: no answer within ${this.options.deadlineMs} ms`);
        else if (!this.options.connectionErrorsExpected) this.problems.push(`POST /v1/runs on ${base}: ${e.message} ${String((e.cause as Error | undefined)?.message ?? '')}`);
        this.connectionErrors++;
        await pause(50);
        continue;
      }
      const answer: Answer = { status: res.status, code: parsed?.code, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started };
      this.answers.push(answer);
      if (res.status === 202) {
        const jobId = String(parsed.data.jobId);
        const before = this.acked.get(key);
        if (before !== undefined && before !== jobId) this.problems.push(`Idempotency-Key ${key} acknowledged with two jobs: ${before} and ${jobId}`);
        this.acked.set(key, jobId);
        return jobId;
      }
      if (res.status === 503 && parsed?.code === 'UNAVAILABLE' && answer.retryAfter !== null && Number(answer.retryAfter) >= 1) {
        // A real client waits Retry-After seconds; the test waits less, to keep the pressure on.
        await pause(100);
        continue;
      }
      if (res.status === 409 && parsed?.code === 'IDEMPOTENCY_IN_PROGRESS') {
        await pause(100);
        continue;
      }
      this.problems.push(`POST /v1/runs: unexpected ${res.status} ${JSON.stringify(parsed)} (Retry-After ${answer.retryAfter})`);
      await pause(100);
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * What the database holds for the workspace against what the client was told (`acked`): the
 * list of broken rules, empty when every rule holds.
 */
export async function admissionProblems(db: Kysely<Database>, workspaceId: string, acked: Map<string, string>): Promise<string[]> {
  const problems: string[] = [];
  const jobs = await db.selectFrom('jobs').select(['id', 'status', 'cost_mc', 'funding']).where('workspace_id', '=', workspaceId).execute();
  const jobIds = new Set(jobs.map((j) => j.id));
  const ackedIds = new Set(acked.values());
  for (const id of ackedIds) if (!jobIds.has(id)) problems.push(`acknowledged run ${id} has no job`);
  for (const id of jobIds) if (!ackedIds.has(id)) problems.push(`job ${id} was never acknowledged to the client (its key was retried until acknowledged)`);
  if (ackedIds.size !== acked.size) problems.push(`${acked.size} keys acknowledged ${ackedIds.size} distinct jobs`);

  const keys = await db.selectFrom('idempotency_keys').select(['idem_key', 'state', 'response_json']).where('workspace_id', '=', workspaceId).execute();
  for (const k of keys) {
    const jobId = acked.get(k.idem_key);
    if (jobId === undefined) problems.push(`stored Idempotency-Key ${k.idem_key} (${k.state}) the client never had acknowledged`);
    else if (k.state !== 'done' || JSON.parse(String(k.response_json)).jobId !== jobId) problems.push(`stored Idempotency-Key ${k.idem_key} does not replay job ${jobId}: ${k.state} ${k.response_json}`);
  }
  if (keys.length !== acked.size) problems.push(`${keys.length} stored Idempotency-Keys for ${acked.size} acknowledged ones`);

  const holds = await db.selectFrom('credit_holds').select(['job_id', 'released_at_ms']).where('workspace_id', '=', workspaceId).execute();
  const holdsByJob = new Map<string, number>();
  for (const h of holds) {
    holdsByJob.set(h.job_id, (holdsByJob.get(h.job_id) ?? 0) + 1);
    if (!jobIds.has(h.job_id)) problems.push(`hold for job ${h.job_id}, which does not exist`);
  }
  for (const j of jobs) {
    const n = holdsByJob.get(j.id) ?? 0;
    if (j.funding === 'credits' && n !== 1) problems.push(`job ${j.id} (${j.status}) has ${n} holds`);
  }
  const open = new Map(holds.filter((h) => h.released_at_ms === null).map((h) => [h.job_id, true]));
  for (const j of jobs) {
    const terminal = j.status === 'completed' || j.status === 'failed' || j.status === 'cancelled';
    if (terminal && open.has(j.id)) problems.push(`job ${j.id} is ${j.status} but its hold is still open`);
    if (!terminal && j.funding === 'credits' && !open.has(j.id)) problems.push(`job ${j.id} is ${j.status} but its hold is released`);
  }

  const usage = await db.selectFrom('credit_transactions').select(['job_id', 'amount_mc']).where('workspace_id', '=', workspaceId).where('type', '=', 'usage').execute();
  const charged = new Map<string, number[]>();
  for (const u of usage) charged.set(String(u.job_id), [...(charged.get(String(u.job_id)) ?? []), Number(u.amount_mc)]);
  for (const j of jobs) {
    const entries = charged.get(j.id) ?? [];
    const sum = -entries.reduce((a, b) => a + b, 0);
    if (sum !== Number(j.cost_mc)) problems.push(`job ${j.id} costs ${j.cost_mc} but its usage entries sum to ${sum} (${entries.length} entries)`);
    if (j.status === 'completed' && Number(j.cost_mc) > 0 && entries.length !== 1) problems.push(`completed job ${j.id} has ${entries.length} usage entries`);
  }
  return problems;
}
