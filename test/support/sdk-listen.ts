/**
 * The test of `was-client listen --forward-to` (run by test/sdk/sdk-cli.test.ts on its server):
 * events reach a local receiver that verifies them with the SDK's verifyWebhook and the secret
 * listen printed; a failed POST is retried; listen is killed (SIGKILL) and restarted on its state
 * file and continues without losing or repeating an event; the forwarded events are exactly the
 * feed's.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpJson } from './processes.js';
import { waitUntil } from './wait.js';
import { spawnCli, type ServiceUnderTest } from './sdk.js';
import { verifyWebhook } from '../../packages/sdk/src/index.js';

interface Lines {
  all: any[];
  next(): Promise<any>;
}

function jsonLines(child: ChildProcess): Lines {
  const all: any[] = [];
  let read = 0;
  let buffer = '';
  let wake: (() => void) | undefined;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      all.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
    wake?.();
  });
  return {
    all,
    async next() {
      while (read >= all.length) await new Promise<void>((r) => (wake = r));
      return all[read++];
    },
  };
}

export async function listenTest(sut: ServiceUnderTest): Promise<void> {
  const { env, server, tenant } = sut;
  const dir = mkdtempSync(join(tmpdir(), 'was-listen-'));
  let secret = '';
  const received: string[] = [];
  const refusedBodies: string[] = [];
  let failFirst = true;
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', async () => {
      if (failFirst) {
        failFirst = false;
        res.writeHead(500).end();
        return;
      }
      try {
        const event = await verifyWebhook(body, req.headers['service-signature'], secret);
        assert.equal(event.id, req.headers['service-event-id']);
        assert.equal(event.workspaceId, tenant.workspaceId);
        received.push(event.id);
        res.writeHead(200).end();
      } catch {
        refusedBodies.push(body);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const forwardTo = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  const stateFile = join(dir, 'listen-state.json');
  const start = () => spawnCli(['listen', '--forward-to', forwardTo, '--types', 'job.completed', '--state', stateFile, '--poll-interval', '100', '--json'], env);
  const runJobs = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await httpJson(server.base, 'POST', '/v1/runs', {
        headers: { ...tenant.headers, 'idempotency-key': randomUUID() },
        body: { operationId: 'image.generate', input: { prompt: `listen ${i} [sim:delay=0]` } },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      ids.push(r.body.data.jobId);
    }
    for (const id of ids) await waitUntil(() => httpJson(server.base, 'GET', `/v1/jobs/${id}`, { headers: tenant.headers }), (r) => r.body.data.status === 'completed', `job ${id}`, 30_000, 50);
    return ids;
  };
  const feedIds = async () =>
    (await httpJson(server.base, 'GET', '/v1/events?types=job.completed&limit=100', { headers: tenant.headers })).body.data.items.map((e: { id: string }) => e.id) as string[];
  const forwardedAll = (ids: string[]) => {
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { forwarded: string[]; cursor: string };
    return ids.every((id) => state.forwarded.includes(id)) || state.forwarded.length === 0;
  };
  try {
    const earlier = new Set(await feedIds()); // events of the suite's other tests: before listen's first start
    const first = start();
    const lines = jsonLines(first);
    const ready = await lines.next();
    assert.equal(ready.type, 'ready');
    assert.equal(ready.resumed, false);
    assert.match(ready.secret, /^whsec_[0-9a-f]{48}$/);
    secret = ready.secret;
    await runJobs(3);
    await waitUntil(async () => received.length, (n) => n >= 3, 'three events received', 30_000, 50);
    await waitUntil(async () => forwardedAll(received), Boolean, 'the state file records them', 10_000, 20);
    assert.ok(lines.all.some((l) => l.type === 'delivery' && l.status === 500 && l.outcome === 'retrying'), 'the refused first POST was retried');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    await runJobs(3); // while listen is down
    const second = start();
    const lines2 = jsonLines(second);
    const ready2 = await lines2.next();
    assert.equal(ready2.resumed, true);
    assert.equal(ready2.secret, secret, 'the secret is kept in the state');
    await waitUntil(async () => received.length, (n) => n >= 6, 'six events received', 30_000, 50);
    await runJobs(1);
    await waitUntil(async () => received.length, (n) => n >= 7, 'seven events received', 30_000, 50);
    await new Promise((r) => setTimeout(r, 400)); // room for a wrongly repeated delivery
    second.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => second.once('exit', (c) => r(c)));
    assert.equal(code, 0, 'a graceful stop exits 0');

    assert.deepEqual(refusedBodies, [], 'every forwarded request verified');
    assert.equal(new Set(received).size, received.length, `no duplicates: ${received.join(',')}`);
    assert.deepEqual(received, (await feedIds()).filter((id) => !earlier.has(id)), 'exactly the feed after the first start, in order');
    for (const line of [...lines.all, ...lines2.all].filter((l) => l.type === 'delivery')) {
      assert.equal(line.eventType, 'job.completed');
      assert.equal(typeof line.latencyMs, 'number');
    }
  } finally {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
