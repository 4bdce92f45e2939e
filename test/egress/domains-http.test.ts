/**
 * Domain verification by HTTP through the admin API (decisions.md 4): the service fetches
 * https://HOSTNAME/.well-known/service-verify.txt through the egress client, from a real HTTPS
 * server (test/support/https-receiver.ts, its certificate trusted by the test process), and the
 * domain is verified when the file holds the token. The server listens on a port of its own, not
 * 443: the egress client is wrapped to send https://HOSTNAME/… to that port, everything else (DNS,
 * address policy, TLS verification, no redirects) is the real client's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { assertError } from '../support/assertions.js';
import { isHostnameVerifiedFor } from '../../src/modules/domains/service.js';
import type { Egress } from '../../src/egress/types.js';

const receiver = HttpsReceiver.forThisFile();

/** Sends requests for https://HOSTNAME/… to the receiver's port (the verification always asks port 443). */
function routeToReceiver(ctx: TestContext): () => void {
  const original = ctx.deps.egress;
  const routed: Egress = {
    ...original,
    request: (url, init) => {
      const u = new URL(url);
      if (u.protocol === 'https:' && u.port === '' && u.hostname.endsWith('.localhost')) u.port = String(receiver.port);
      return original.request(u.toString(), init);
    },
  };
  ctx.deps.egress = routed;
  return () => {
    ctx.deps.egress = original;
  };
}

async function addDomain(ctx: TestContext, workspaceId: string, hostname: string): Promise<string> {
  const res = await admin(ctx, `/admin/v1/workspaces/${workspaceId}/domains`, { hostname });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.domain.verificationToken as string;
}

describeEachDatabase(
  'domain verification over HTTP',
  (get) => {
    test('the token served at https://HOSTNAME/.well-known/service-verify.txt verifies the domain (method http)', async () => {
      const ctx = get();
      receiver.reset();
      const restore = routeToReceiver(ctx);
      try {
        const t = await seedTenant(ctx.deps);
        // A name the test certificate covers (Node matches no wildcard on a single-label parent).
        const hostname = 'hooks.localhost';
        const token = await addDomain(ctx, t.workspace.id, hostname);
        receiver.reply({ status: 200, body: `${token}\n` });
        const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/verify`, { method: 'http' });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.domain.status, 'verified');
        assert.equal(receiver.requests.length, 1);
        assert.equal(receiver.requests[0]!.method, 'GET');
        assert.equal(receiver.requests[0]!.path, '/.well-known/service-verify.txt');
        assert.equal(receiver.requests[0]!.headers.host, `${hostname}:${receiver.port}`);
        assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), true);
      } finally {
        restore();
      }
    });

    test('another token, an error status or a redirect to the right file leave the domain pending (400 DOMAIN_NOT_VERIFIED)', async () => {
      const ctx = get();
      receiver.reset();
      const restore = routeToReceiver(ctx);
      try {
        const t = await seedTenant(ctx.deps);
        const hostname = 'hooks-b.localhost';
        const token = await addDomain(ctx, t.workspace.id, hostname);
        receiver.reply(
          { status: 200, body: 'another-token' },
          { status: 404, body: token },
          { status: 302, location: `https://${hostname}:${receiver.port}/token.txt` },
        );
        for (let i = 0; i < 3; i++) {
          assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/verify`, { method: 'http' }), 400, 'DOMAIN_NOT_VERIFIED');
        }
        assert.equal(receiver.requests.length, 3, 'the redirect was not followed');
        assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), false);
      } finally {
        restore();
      }
    });
  },
  { env: { EGRESS_ALLOW_CIDRS: '127.0.0.1/32,::1/128' } },
);
