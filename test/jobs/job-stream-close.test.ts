/**
 * Job streams end cleanly when the app closes (server shutdown: server.ts calls app.close()):
 * open streams get no further frame, their responses end, their slots are released, and
 * app.close() does not wait for the clients to hang up, nor for keep-alive connections to time out.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, disposeTestContext, testKeySuite } from '../support/harness.js';
import { testDatabaseNames } from '../support/databases.js';
import { scopeOf, seedTenant } from '../support/seed.js';
import { run } from '../support/jobs.js';
import { Agent } from 'node:http';
import { baseUrl } from '../support/base-url.js';
import { apiHeaders, frameReader, streamGet } from '../support/sse.js';

for (const dbName of testDatabaseNames()) {
  describe(`job streams on shutdown [${dbName}]`, () => {
    test('app.close() ends every open stream (no further frame), closes its connection and releases its slot', { timeout: 30_000 }, async () => {
      const ctx = await createTestContext(dbName, testKeySuite());
      try {
        ctx.deps.streamSettings.keepAliveMs = 600_000;
        const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
        const res = await run(ctx, t, 'sprite.generate', { prompt: 'a knight', frames: 2, frameWidth: 16, frameHeight: 16 });
        assert.equal(res.statusCode, 202, res.body);
        const jobId = res.json().data.jobId;
        const url = `${await baseUrl(ctx)}/v1/jobs/${jobId}/stream`;
        const readers = [];
        // The second client keeps its connection alive after the response, as fetch does: the
        // server must close it at shutdown rather than wait out its keep-alive timeout.
        const keepAlive = new Agent({ keepAlive: true });
        for (const agent of [false, keepAlive] as const) {
          const reader = frameReader(await streamGet(url, apiHeaders(t, { accept: 'text/event-stream' }), agent).response);
          assert.equal((await reader.next())?.event, 'job');
          readers.push(reader);
        }
        const open = await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', scopeOf(t)).execute();
        assert.equal(open.length, 2, 'each open stream holds a slot of the key\'s scope');
        const started = Date.now();
        await ctx.app.close();
        assert.ok(Date.now() - started < 5000, `app.close() took ${Date.now() - started} ms: it does not wait for the stream clients' connections`);
        for (const reader of readers) assert.deepEqual(await reader.rest(2000), [], 'the stream ended without another frame');
        keepAlive.destroy();
        const slots = await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', scopeOf(t)).execute();
        assert.equal(slots.length, 0, 'slots released before the database closes');
      } finally {
        await disposeTestContext(ctx);
      }
    });
  });
}
