/**
 * Queued runs as MCP tasks (revision 2025-11-25, the SDK's experimental tasks) and progress
 * notifications, with the official SDK client: a task per queued run, tasks/get and tasks/result
 * answered from the database (also by another app instance), status notifications, tasks/cancel
 * cancelling the job, and other workspaces' jobs invisible. The runs are a test key's (simulated
 * work, the test balance).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ListTasksResultSchema, McpError, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../../src/app.js';
import { TASKS_PAGE_SIZE } from '../../src/mcp/tasks.js';
import * as accounts from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { admin, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { gateAdapter } from '../support/gates.js';
import { drain, getJob, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { baseUrl } from '../support/base-url.js';
import { connectClient } from '../support/mcp-client.js';
import { waitUntil } from '../support/wait.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';

const MUSIC = { prompt: 'a calm tune', durationSeconds: 5 };

async function createTask(client: Client, name: string, args: Record<string, unknown>) {
  return (await client.request({ method: 'tools/call', params: { name, arguments: args, task: {} } }, CreateTaskResultSchema)).task;
}

async function taskError(work: Promise<unknown>): Promise<McpError> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof McpError, String(err));
    return err;
  }
  assert.fail('expected a JSON-RPC error');
}

describeEachDatabase('MCP tasks and progress', (get) => {
  test('a queued run is a task: working, then tasks/result waits for the job, notifies its status changes and answers the snapshot with resource links', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const listed = (await client.listTools()).tools;
      assert.equal(listed.find((x) => x.name === 'service_run_music_generate')!.execution?.taskSupport, 'optional');
      assert.equal(listed.find((x) => x.name === 'service_runs_create')!.execution?.taskSupport, 'optional');
      assert.equal(listed.find((x) => x.name === 'service_jobs_get')!.execution, undefined, 'reads are not tasks');
      assert.equal(listed.find((x) => x.name === 'service_run_chat_generate')!.execution, undefined, 'a synchronous operation is no task');

      const task = await createTask(client, 'service_run_music_generate', { workspaceId: t.workspace.id, ...MUSIC });
      assert.equal(task.status, 'working');
      assert.equal(task.ttl, null);
      assert.ok(task.pollInterval! > 0);
      assert.equal((await getJob(ctx, t, task.taskId)).status, 'pending', 'the task id is the job id');
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'working');

      const statuses: string[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
        statuses.push(n.params.status);
      });
      const progress: number[] = [];
      const waiting = client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema, { onprogress: (p) => progress.push(p.progress) });
      // The gate: tasks/result's first progress notification says it saw the job still pending and waits on it.
      await waitUntil(async () => progress.length, (n) => n >= 1, 'tasks/result waiting on the pending job', 60_000, 10);
      await drain(ctx);
      const result = await waiting;
      assert.equal(result.isError, false);
      const body = result.structuredContent as any;
      assert.deepEqual([body.code, body.data.id, body.data.status], ['PUBLIC_JOBS_GET', task.taskId, 'completed']);
      assert.deepEqual((result._meta as Record<string, any>)['io.modelcontextprotocol/related-task'], { taskId: task.taskId });
      const links = result.content.filter((c) => c.type === 'resource_link');
      assert.equal(links.length, 1);
      assert.equal((links[0] as { uri: string }).uri, body.data.output.audio.url);
      assert.equal(statuses.at(-1), 'completed', `status notifications: ${statuses.join(', ')}`);
      assert.ok(progress.length >= 1, 'progress while waiting');
      assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'completed');

      // The SDK's streaming helper drives the same task end to end (it polls tasks/get, then tasks/result).
      const events: string[] = [];
      const stream = client.experimental.tasks.callToolStream({ name: 'service_runs_create', arguments: { workspaceId: t.workspace.id, operationId: 'music.generate', input: MUSIC } });
      let finished: any;
      for await (const message of stream) {
        events.push(message.type);
        if (message.type === 'taskCreated') void drain(ctx);
        if (message.type === 'result') finished = message.result;
        if (message.type === 'error') throw message.error;
      }
      assert.equal(events[0], 'taskCreated');
      assert.equal(finished.structuredContent.data.status, 'completed');

      // A synchronous operation asked as a task: the task is already terminal.
      const sync = await createTask(client, 'service_runs_create', { workspaceId: t.workspace.id, operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'hi' }] } });
      assert.equal(sync.status, 'completed');
      const syncResult = await client.experimental.tasks.getTaskResult(sync.taskId, CallToolResultSchema);
      assert.equal((syncResult.structuredContent as any).data.operationId, 'chat.generate');
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      await client.close();
    }
  });

  test('tasks are answered from the database by any app instance; tasks/cancel cancels the job; another workspace’s job is not found; a refused run is a JSON-RPC error, not a task', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    // A second instance of the service on the same database (as a second process would be).
    const second = await buildApp(ctx.deps);
    await second.listen({ port: 0, host: '127.0.0.1' });
    const other = new Client({ name: 'second', version: '1' });
    await other.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(second.server.address() as AddressInfo).port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.secret}` } } }));
    try {
      const task = await createTask(client, 'service_run_music_generate', { workspaceId: t.workspace.id, ...MUSIC });
      assert.equal((await other.experimental.tasks.getTask(task.taskId)).status, 'working', 'the other instance knows the task');
      const cancelled = await other.experimental.tasks.cancelTask(task.taskId);
      assert.equal(cancelled.status, 'cancelled');
      assert.equal((await getJob(ctx, t, task.taskId)).status, 'cancelled', 'the job is cancelled');
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      assert.equal(result.isError, true, 'a cancelled task’s result is an error');
      const again = await taskError(client.experimental.tasks.cancelTask(task.taskId));
      assert.equal(again.code, -32602);
      assert.match(again.message, /already ended/);

      const stranger = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
      const strangerClient = await connectClient(ctx, stranger.secret);
      try {
        // One request at a time: a request made before the previous one is awaited could reject unobserved.
        const asks = [() => strangerClient.experimental.tasks.getTask(task.taskId), () => strangerClient.experimental.tasks.cancelTask(task.taskId), () => strangerClient.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)];
        for (const ask of asks) {
          const err = await taskError(ask());
          assert.equal(err.code, -32602);
          assert.match(err.message, /Task not found/, 'another workspace’s job is not found, never forbidden');
        }
      } finally {
        await strangerClient.close();
      }
      for (const id of ['00000000-0000-4000-8000-000000000000', 'junk']) assert.match((await taskError(client.experimental.tasks.getTask(id))).message, /Task not found/);

      const poor = await seedTenant(ctx.deps, { mode: 'test' });
      const poorClient = await connectClient(ctx, poor.secret);
      try {
        const refused = await taskError(createTask(poorClient, 'service_run_music_generate', { workspaceId: poor.workspace.id, ...MUSIC }));
        assert.equal(refused.code, -32000);
        assert.equal((refused.data as { httpStatus: number }).httpStatus, 402);
        assert.match(refused.message, /INSUFFICIENT_CREDITS/);
        const invalid = await taskError(createTask(poorClient, 'service_run_music_generate', { workspaceId: poor.workspace.id, prompt: '' }));
        assert.equal(invalid.code, -32602);
        const notTask = await taskError(createTask(poorClient, 'service_jobs_list', { workspaceId: poor.workspace.id }));
        assert.match(notTask.message, /does not run as a task/);
      } finally {
        await poorClient.close();
      }
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      await client.close();
      await other.close();
      await second.close();
    }
  });

  test('a long synchronous call with a progressToken streams progress over SSE; without one the answer is plain JSON', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    try {
      const progress: { progress: number; message?: string }[] = [];
      const res = (await client.callTool(
        { name: 'service_run_chat_generate', arguments: { workspaceId: t.workspace.id, messages: [{ role: 'user', content: 'think hard [sim:delay=1300]' }] } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      )) as { structuredContent: any };
      assert.equal(res.structuredContent.data.status, 'completed');
      assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, `progress increases: ${JSON.stringify(progress)}`);
      assert.match(progress.at(-1)!.message!, /service_run_chat_generate: 0% after \d+ s/, 'a job that reports no percentage: beats at 0% (plus 0.001 each)');
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      await client.close();
    }
    const base = await baseUrl(ctx);
    const call = (meta: Record<string, unknown> | undefined) =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.secret}`, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'service_usage_get', arguments: { workspaceId: t.workspace.id }, ...(meta ? { _meta: meta } : {}) } }),
      });
    const plain = await call(undefined);
    assert.match(String(plain.headers.get('content-type')), /application\/json/);
    assert.equal(((await plain.json()) as { result: { isError: boolean } }).result.isError, false);
    const streamed = await call({ progressToken: 'p1' });
    assert.match(String(streamed.headers.get('content-type')), /text\/event-stream/);
    const text = await streamed.text();
    assert.match(text, /notifications\/progress/);
    assert.match(text, /"id":3/);
  });

  test('progress of a synchronous run is the job’s own percentage (total 100) where the job reports one, held on a gate until the client saw it', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const client = await connectClient(ctx, t.secret);
    // Four steps; the run is held right after the checkpoint of step 2, when step 1 reported 25 %.
    const gate = gateAdapter(ctx.deps, 'chat.generate', { after: 'checkpoint', step: 2 }, 'test');
    try {
      const progress: { progress: number; total?: number; message?: string }[] = [];
      const call = client.callTool(
        { name: 'service_run_chat_generate', arguments: { workspaceId: t.workspace.id, messages: [{ role: 'user', content: 'in steps [sim:steps=4] [sim:delay=4]' }] } },
        undefined,
        { onprogress: (p) => progress.push(p) },
      );
      const jobId = await gate.reached;
      await waitUntil(async () => progress, (p) => p.some((n) => n.progress === 25), 'the job’s 25 % as a progress notification', 60_000, 10);
      gate.open();
      const res = (await call) as { structuredContent: any };
      assert.equal(res.structuredContent.data.status, 'completed');
      assert.equal(res.structuredContent.data.jobId, jobId);
      const at25 = progress.find((p) => p.progress === 25)!;
      assert.equal(at25.total, 100);
      assert.match(at25.message!, /service_run_chat_generate: 25% after \d+ s/);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, `progress increases: ${JSON.stringify(progress)}`);
      assert.ok(progress.every((p) => p.progress <= 100 && p.total === 100));
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    } finally {
      gate.restore();
      await client.close();
    }
  });

  test('tasks/list (revision 2025-11-25) lists the jobs of the key’s own workspaces as tasks, newest first, paged with nextCursor across its workspaces; another tenant’s key sees none of them and cannot use their cursor', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000_000, mode: 'test' });
    // A second workspace of the same user, and a key for both.
    const second = await accounts.createWorkspace(ctx.deps, { name: 'Second workspace', plan: 'pro', ownerUserId: t.user.id });
    await ensureTestTwin(ctx.deps.db, second, 0, ctx.clock.now());
    await grantCredits(ctx.deps, second.id, { amountMillicents: 1_000_000, mode: 'test' });
    for (const id of [t.workspace.id, second.id]) {
      const res = await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000 } });
      assert.equal(res.statusCode, 200, res.body);
    }
    const both = await seedKey(ctx.deps, t.user.id, [t.workspace.id, second.id], { transports: ['rest', 'mcp'], mode: 'test' });
    const first: string[] = [];
    for (let i = 0; i < TASKS_PAGE_SIZE; i++) {
      const res = await run(ctx, t, 'chat.generate', { messages: [{ role: 'user', content: `hello ${i}` }] });
      assert.equal(res.statusCode, 200, res.body);
      first.push(res.json().data.jobId);
    }
    const queued = await run(ctx, t, 'music.generate', MUSIC);
    assert.equal(queued.statusCode, 202, queued.body);
    first.push(queued.json().data.jobId);
    const inSecond: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await run(ctx, { secret: both.secret, workspace: second }, 'chat.generate', { messages: [{ role: 'user', content: `second ${i}` }] });
      assert.equal(res.statusCode, 200, res.body);
      inSecond.push(res.json().data.jobId);
    }
    const stranger = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const strangerRun = await run(ctx, stranger, 'music.generate', MUSIC);
    assert.equal(strangerRun.statusCode, 202, strangerRun.body);

    const client = await connectClient(ctx, both.secret);
    const strangerClient = await connectClient(ctx, stranger.secret);
    try {
      const list = (cursor?: string) => client.request({ method: 'tasks/list', params: cursor === undefined ? {} : { cursor } }, ListTasksResultSchema);
      const pages = [await list()];
      while (pages.at(-1)!.nextCursor) pages.push(await list(pages.at(-1)!.nextCursor));
      assert.deepEqual(pages.map((p) => p.tasks.length), [TASKS_PAGE_SIZE, 1, 2], 'a full page, the rest of the first workspace, then the second workspace');
      const ids = pages.flatMap((p) => p.tasks.map((task) => task.taskId));
      assert.deepEqual(ids, [...first.reverse(), ...inSecond.reverse()], 'newest first within each workspace, the key’s workspaces in order');
      const newest = pages[0]!.tasks[0]!;
      assert.deepEqual([newest.taskId, newest.status, newest.ttl], [queued.json().data.jobId, 'working', null]);
      assert.equal(pages[0]!.tasks[1]!.status, 'completed');
      assert.ok(!ids.includes(strangerRun.json().data.jobId), 'no other tenant’s job');

      const theirs = await strangerClient.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
      assert.deepEqual(theirs.tasks.map((task) => task.taskId), [strangerRun.json().data.jobId], 'the stranger sees only its own');
      assert.equal(theirs.nextCursor, undefined);
      // Cursors name the workspace: another key's cursor, or one made up, is refused (-32602).
      const asks: [Client, string][] = [
        [strangerClient, pages[0]!.nextCursor!],
        [strangerClient, pages[1]!.nextCursor!],
        [client, 'junk'],
        [client, Buffer.from(JSON.stringify({ w: t.workspace.id, c: 'not-a-cursor' })).toString('base64url')],
      ];
      for (const [asker, cursor] of asks) {
        const err = await taskError(asker.request({ method: 'tasks/list', params: { cursor } }, ListTasksResultSchema));
        assert.equal(err.code, -32602, `${cursor}: ${err.message}`);
        assert.match(err.message, /Invalid cursor for tasks\/list/);
      }
    } finally {
      await client.close();
      await strangerClient.close();
    }
  });

  test('the server declares tasks.list and tasks.cancel; task requests with params that do not fit are -32602, not a server fault', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
    const client = await connectClient(ctx, t.secret);
    try {
      const tasks = client.getServerCapabilities()?.tasks as Record<string, unknown>;
      assert.deepEqual(Object.keys(tasks).sort(), ['cancel', 'list', 'requests']);
    } finally {
      await client.close();
    }
    const base = await baseUrl(ctx);
    for (const [method, params] of [['tasks/list', { cursor: 5 }], ['tasks/get', {}], ['tasks/result', { taskId: 7 }], ['tasks/cancel', { taskId: null }]] as const) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.secret}`, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
      });
      const text = await res.text();
      const body = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { error?: { code: number } };
      assert.equal(body.error?.code, -32602, `${method}: ${text}`);
    }
  });
}, testKeySuite());
