/**
 * client.runs.stream and `was-client run chat.generate --stream` (issue 37 item 4) against the
 * service over a loopback socket, on the simulated provider, which streams a chat reply word by
 * word: the deltas then the result with the JSON answer's data and the job; an operation that does
 * not stream gives its result alone; leaving the loop early stops the run (the job is cancelled,
 * charged only what was consumed). was-client is the built binary against the built server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testKeySuite, type TestContext } from '../support/harness.js';
import { cli, describeEachServer, describeSdkDatabases } from '../support/sdk.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { getJob, run } from '../support/jobs.js';
import { baseUrl } from '../support/base-url.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { waitUntil } from '../support/wait.js';
import { createClient } from '../../packages/sdk/src/node.js';
import type { RunStreamEvent } from '../../packages/sdk/src/index.js';

async function sdkFor(ctx: TestContext, t: Tenant) {
  return createClient({ baseUrl: await baseUrl(ctx), apiKey: t.secret, workspaceId: t.workspace.id, retryBaseDelayMs: 20 });
}

describeSdkDatabases('SDK runs.stream', (get) => {
  test('yields the reply as deltas, then the result with the JSON answer’s data and the job', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const sdk = await sdkFor(ctx, t);
    const input = { messages: [{ role: 'user' as const, content: 'stream this [sim:cost=55]' }] };
    const events: RunStreamEvent<'chat.generate'>[] = [];
    for await (const event of sdk.runs.stream('chat.generate', input)) events.push(event);
    const deltas = events.filter((e) => e.type === 'delta').map((e) => (e.type === 'delta' ? e.text : ''));
    assert.deepEqual(deltas, ['Simulated ', 'reply ', 'to: ', 'stream ', 'this ', '[sim:cost=55]']);
    const last = events[events.length - 1]!;
    assert.equal(last.type, 'result');
    if (last.type !== 'result' || last.data.kind !== 'result') throw new Error('unreachable');
    assert.equal(last.data.result?.message.content, deltas.join(''));
    assert.deepEqual([last.job.id, last.job.status, last.job.costMillicents, last.data.costMillicents], [last.data.jobId, 'completed', 55, 55]);
    const json = await run(ctx, t, 'chat.generate', input);
    assert.deepEqual(last.data.result, json.json().data.result);

    // An operation that does not stream: its JSON answer, as the result alone.
    const queued = [];
    for await (const event of sdk.runs.stream('image.generate', { prompt: 'a kite' })) queued.push(event);
    assert.equal(queued.length, 1);
    assert.deepEqual([queued[0]!.type, queued[0]!.type === 'result' && queued[0]!.data.kind, queued[0]!.type === 'result' && queued[0]!.job.status], ['result', 'job', 'pending']);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });

  test('leaving the loop early stops the run: the job is cancelled, charged only the share consumed', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { mode: 'test', credits: 1_000_000 });
    const sdk = await sdkFor(ctx, t);
    // Ten words over 4 s, each a tenth of the cost: the loop leaves after the first.
    const input = { messages: [{ role: 'user' as const, content: 'a b c d e [sim:delay=4000] [sim:cost=800]' }] };
    for await (const event of sdk.runs.stream('chat.generate', input)) {
      assert.deepEqual(event, { type: 'delta', text: 'Simulated ' });
      break;
    }
    const jobs = await sdk.jobs.list({ limit: 1 });
    const job = await waitUntil(() => getJob(ctx, t, jobs.items[0]!.id), (j) => j.status !== 'processing', 'the stopped run to end', 10_000);
    assert.equal(job.status, 'cancelled');
    assert.ok([80, 160].includes(job.costMillicents), `charged ${job.costMillicents} for the one or two words sent`);
    assert.equal((await sdk.balance.get()).reservedMillicents, 0);
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());

describeEachServer('was-client run --stream', (get) => {
  test('prints the reply as it arrives, the outcome on stderr; --json prints event lines', async () => {
    const { env } = get();
    const input = JSON.stringify({ messages: [{ role: 'user', content: 'hello there' }] });
    const r = await cli(['run', 'chat.generate', '--input', input, '--stream'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Simulated reply to: hello there\n');
    assert.match(r.stderr, /^completed \(job [0-9a-f-]{36}, cost \d+ millicents/);

    const j = await cli(['run', 'chat.generate', '--input', input, '--stream', '--json'], env);
    assert.equal(j.code, 0, j.stderr);
    const lines = j.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.slice(0, -1).map((l) => l.text).join(''), 'Simulated reply to: hello there');
    assert.deepEqual([lines.at(-1).type, lines.at(-1).job.status, lines.at(-1).data.status], ['result', 'completed', 'completed']);
  });
});
