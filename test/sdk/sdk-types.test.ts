/**
 * The SDK's generated types match the served /openapi.json (regenerate with `npm run generate -w
 * workspace-automation-sdk`), and its core stays portable: no Node-only import outside the Node
 * entry and the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestContext, disposeTestContext } from '../support/harness.js';
import { generateTypes } from '../../packages/sdk/scripts/openapi-types.js';
import type { Job, OperationId, OperationInput, OperationResult } from '../../packages/sdk/src/index.js';

const SDK_SRC = 'packages/sdk/src';

test('packages/sdk/src/generated/openapi.ts is what openapi-typescript makes of the served /openapi.json', async () => {
  const ctx = await createTestContext('sqlite');
  try {
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const expected = await generateTypes(res.json());
    const committed = readFileSync(join(SDK_SRC, 'generated/openapi.ts'), 'utf8');
    assert.ok(committed === expected, 'the committed types drifted from /openapi.json: run `npm run build && npm run generate -w workspace-automation-sdk`');
  } finally {
    await disposeTestContext(ctx);
  }
});

test('/openapi.json describes each operation: a oneOf request body on operationId and per-operation input and result', async () => {
  const ctx = await createTestContext('sqlite');
  try {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/v1/runs', '/v1/estimates']) {
      const body = doc.paths[path].post.requestBody.content['application/json'].schema;
      assert.equal(body.discriminator.propertyName, 'operationId');
      assert.equal(body.oneOf.length, 14, path);
    }
    const request = doc.components.schemas['video.edit.request'];
    assert.deepEqual(request.properties.operationId.enum, ['video.edit']);
    assert.equal(request.properties.input.$ref, '#/components/schemas/video.edit.input');
    const result = doc.paths['/v1/runs'].post.responses['200'].content['application/json'].schema.properties.data.properties.result;
    assert.deepEqual(result.anyOf.map((s: { $ref?: string }) => s.$ref).filter(Boolean), ['#/components/schemas/link.preview.result', '#/components/schemas/chat.generate.result']);
    assert.equal(doc.paths['/v1/runs'].post.responses['202'].content['application/json'].schema.properties.data.properties.kind.enum[0], 'job');
  } finally {
    await disposeTestContext(ctx);
  }
});

test('the SDK core imports nothing Node-only (it runs in browsers); only node.ts and cli/ may', () => {
  const files = readdirSync(SDK_SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.startsWith('cli/') && f !== 'cli' && f !== 'node.ts');
  assert.ok(files.includes('client.ts'));
  for (const file of files) {
    const text = readFileSync(join(SDK_SRC, file), 'utf8');
    const imports = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
    for (const spec of imports) assert.ok(spec.startsWith('./') || spec.startsWith('../'), `${file} imports ${spec}`);
    assert.doesNotMatch(text, /\bBuffer\.|\bprocess\.|require\(/, `${file} uses a Node global`);
  }
});

test('the types are exact per operation (checked by `npm run typecheck`)', () => {
  const link: OperationInput<'link.preview'> = { url: 'https://example.com' };
  // @ts-expect-error link.preview takes no other field
  const extra: OperationInput<'link.preview'> = { url: 'https://example.com', prompt: 'x' };
  // @ts-expect-error image.generate needs a prompt
  const missing: OperationInput<'image.generate'> = { count: 2 };
  const result = { metadata: { title: null, description: null, image: null, url: null, siteName: null, favicon: null } } satisfies OperationResult<'link.preview'>;
  const ids: OperationId[] = ['link.preview', 'security.scan'];
  // @ts-expect-error not an operation
  const unknownId: OperationId = 'nope';
  const status: Job['status'] = 'cancelled';
  assert.ok(link && extra && missing && result && ids && unknownId && status);
});
