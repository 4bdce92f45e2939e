/**
 * Property tests of the MCP tool service_media_upload (spec Rule 8), which posts to the same
 * endpoint as POST /v1/media/upload: the contents and names of test/media/media-fuzz.test.ts
 * through the tool. Never a 5xx; refusals leave nothing; acceptances store exactly the decoded
 * bytes under the name REST gives (a backslash, a quote or a line break in the name included).
 *
 * MEDIA_FUZZ_RUNS (default 100) scales every property and MEDIA_FUZZ_SEED replays a run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_UPLOAD_MAX_BASE64 } from '../../src/mcp/tools.js';
import { describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { bare, bump, CANONICAL_OF_DECLARED, checkOutcome, params, RUNS, snapshot, type Answer } from '../support/media-upload-checks.js';
import { contentArb, declaredArb, filenameArb, refArb } from '../support/media-upload-arbitraries.js';

// MCP (spec Rule 8): service_media_upload takes {workspaceId, name, mimeType, dataBase64}.

async function mcpClient(ctx: TestContext, secret: string): Promise<Client> {
  if (!ctx.app.server.listening) await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const client = new Client({ name: 'media-fuzz', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return client;
}

/** The tool's answer as the upload endpoint's: its HTTP status (`_meta.httpStatus`) and REST body. */
async function mcpUpload(ctx: TestContext, client: Client, t: Tenant, name: string, mimeType: string, bytes: Buffer): Promise<Answer> {
  ctx.clock.advance(61_000);
  const result = (await client.callTool({
    name: 'service_media_upload',
    arguments: { workspaceId: t.workspace.id, name, mimeType, dataBase64: bytes.toString('base64') },
  })) as { content: { type: string; text: string }[]; _meta?: Record<string, unknown> };
  const text = result.content[0]!.text;
  const status = result._meta?.httpStatus;
  assert.equal(typeof status, 'number', `the tool call reached the upload endpoint: ${text}`);
  return { statusCode: status as number, body: text, json: () => JSON.parse(text), requestIdHeader: undefined };
}

/** Names the MCP tool accepts (1 to 255 characters). */
const mcpNameArb = filenameArb.filter((n) => [...n].length >= 1 && [...n].length <= 255);
/** Characters the tool's multipart encoder must escape or drop (src/mcp/tool-replay.ts uploadBody). */
const MCP_REWRITTEN = /[\\"\r\n]/;

describeEachDatabase('media upload fuzz', (get) => {
  test(`Rule 8 (${Math.ceil(RUNS / 2)} runs): service_media_upload applies the same content checks as REST: never a 5xx, refusals leave nothing, acceptances store exactly the decoded bytes under the stripped name`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const client = await mcpClient(ctx, tenant.secret);
    const stats: Record<string, number> = {};
    try {
      await fc.assert(
        fc.asyncProperty(
          contentArb
            .filter((c) => c.bytes.length > 0 && Math.ceil(c.bytes.length / 3) * 4 <= MCP_UPLOAD_MAX_BASE64)
            .chain((content) => fc.tuple(fc.constant(content), declaredArb(content).map((d) => d ?? 'image/png'))),
          mcpNameArb.filter((n) => !MCP_REWRITTEN.test(n)),
          async ([content, declared], name) => {
            fc.pre(declared.length >= 1 && declared.length <= 255 && !/[\r\n]/.test(declared));
            const before = await snapshot(ctx, tenant.workspace.id);
            const answer = await mcpUpload(ctx, client, tenant, name, declared, content.bytes);
            const outcome = await checkOutcome(ctx, tenant, before, answer, { bytes: content.bytes, declared, filename: name });
            bump(stats, `${content.kind}:${outcome}`);
            if (outcome !== 'stored') assert.equal(outcome, 'UNSUPPORTED_MEDIA', `a file is refused for its content: ${answer.body}`);
            if (content.kind === 'original' && CANONICAL_OF_DECLARED.get(bare(declared))?.id === content.ref.id) assert.equal(outcome, 'stored', answer.body);
          },
        ),
        params(Math.ceil(RUNS / 2)),
      );
    } finally {
      await client.close();
    }
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  // Found here and fixed (src/mcp/tool-replay.ts uploadBody): the tool replaced `"`, `\`, CR and LF in
  // the name with `_`, so `C:\Users\me\photo.png` was stored with its path and `a"b.png` as
  // `a_b.png`. It now escapes `"` and `\` in the quoted filename and drops line breaks (control
  // characters, stripped anyway), so the item is named as a REST upload of the same filename.
  test(`Rule 8 (${Math.ceil(RUNS / 4)} runs): service_media_upload names the item like REST, also when the name holds a backslash, a quote or a line break`, async () => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const client = await mcpClient(ctx, tenant.secret);
    try {
      await fc.assert(
        fc.asyncProperty(refArb, mcpNameArb.filter((n) => MCP_REWRITTEN.test(n)), async (ref, name) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const answer = await mcpUpload(ctx, client, tenant, name, ref.type, ref.bytes);
          assert.equal(await checkOutcome(ctx, tenant, before, answer, { bytes: ref.bytes, declared: ref.type, filename: name }), 'stored', answer.body);
        }),
        params(Math.ceil(RUNS / 4)),
      );
    } finally {
      await client.close();
    }
  });
});
