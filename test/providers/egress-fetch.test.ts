/**
 * The `fetch` the provider SDKs are given (src/providers/egress-fetch.ts) answers with a Response
 * over the bytes the egress client has read. It must behave as a WHATWG Response does for every
 * way a caller may read it: each body method once, `bodyUsed`, `body` as a stream, `clone()`, the
 * headers without the framing the bytes no longer match.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { createEgress } from '../../src/egress/client.js';
import { egressFetch } from '../../src/providers/egress-fetch.js';

const JSON_BODY = { id: 'chatcmpl-1', choices: [{ message: { role: 'assistant', content: 'héllo ✓' } }] };

describe('egress fetch answers', () => {
  let server: Server;
  let base: string;
  const egress = createEgress({ allowCidrs: ['127.0.0.1/32'] });
  const fetchVia = egressFetch(egress, { timeoutMs: 5_000, maxBytes: 1 << 20, policy: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 }, sendAuthorization: true });

  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
        res.end(JSON.stringify(JSON_BODY));
      } else if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify(JSON_BODY)));
      } else if (req.url === '/bytes') {
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        res.end(Buffer.from([0, 1, 2, 250, 251, 252]));
      } else if (req.url === '/empty') {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await egress.close();
  });

  test('a JSON answer is a Response read once by json(), with its status and headers', async () => {
    const res = await fetchVia(`${base}/json`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.ok(res instanceof Response);
    assert.equal(res.status, 200);
    assert.equal(res.ok, true);
    assert.equal(res.headers.get('x-request-id'), 'req_1');
    assert.equal(res.headers.get('content-length'), null, 'framing headers are dropped');
    assert.equal(res.bodyUsed, false);
    assert.deepEqual(await res.json(), JSON_BODY);
    assert.equal(res.bodyUsed, true);
    await assert.rejects(res.json(), TypeError);
    await assert.rejects(res.text(), TypeError);
  });

  test('a decoded answer has no content-encoding left and reads as text', async () => {
    const res = await fetchVia(`${base}/gzip`);
    assert.equal(res.headers.get('content-encoding'), null);
    assert.equal(await res.text(), JSON.stringify(JSON_BODY));
  });

  test('bytes arrive intact through arrayBuffer(), blob() and the body stream', async () => {
    const expected = [0, 1, 2, 250, 251, 252];
    assert.deepEqual([...new Uint8Array(await (await fetchVia(`${base}/bytes`)).arrayBuffer())], expected);
    const blob = await (await fetchVia(`${base}/bytes`)).blob();
    assert.equal(blob.type, 'audio/mpeg');
    assert.deepEqual([...new Uint8Array(await blob.arrayBuffer())], expected);
    const streamed = await fetchVia(`${base}/bytes`);
    const chunks: number[] = [];
    for await (const chunk of streamed.body!) chunks.push(...chunk);
    assert.deepEqual(chunks, expected);
    assert.equal(streamed.bodyUsed, true);
    await assert.rejects(streamed.arrayBuffer(), TypeError);
  });

  test('clone() gives a second reader of the same bytes; a read body cannot be cloned', async () => {
    const res = await fetchVia(`${base}/json`);
    const copy = res.clone();
    assert.deepEqual(await copy.json(), JSON_BODY);
    assert.deepEqual(await res.json(), JSON_BODY);
    assert.throws(() => res.clone(), TypeError);
  });

  test('a 204 has a null body', async () => {
    const res = await fetchVia(`${base}/empty`);
    assert.equal(res.status, 204);
    assert.equal(res.body, null);
  });
});
