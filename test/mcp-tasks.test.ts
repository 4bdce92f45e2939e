/**
 * Queued runs as MCP tasks (revision 2025-11-25, the SDK's experimental tasks) and progress
 * notifications, with the official SDK client: a task per queued run, tasks/get and tasks/result
 * answered from the database (also by another app instance), status notifications, tasks/cancel
 * cancelling the job, and other workspaces' jobs invisible.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../src/app.js';
import { describeEachDatabase } from './support/harness.js';
import { drain, getJob } from './support/jobs.js';
import { assertLedgerInvariants } from './support/ledger.js';
import { baseUrl, connectClient } from './support/mcp-client.js';
import { waitUntil } from './support/processes.js';
import { seedTenant } from './support/seed.js';

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
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
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
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    } finally {
      await client.close();
    }
  });

  test('tasks are answered from the database by any app instance; tasks/cancel cancels the job; another workspace’s job is not found; a refused run is a JSON-RPC error, not a task', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
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

      const stranger = await seedTenant(ctx.deps, { credits: 100_000 });
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

      const poor = await seedTenant(ctx.deps);
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
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    } finally {
      await client.close();
      await other.close();
      await second.close();
    }
  });

  test('a long synchronous call with a progressToken streams progress over SSE; without one the answer is plain JSON', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 100_000 });
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
      assert.deepEqual(progress.map((p) => p.progress), [...progress.keys()], 'progress increases');
      assert.match(progress[0]!.message!, /service_run_chat_generate: running/);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
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
});
