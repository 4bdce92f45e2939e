/**
 * Console sign-in (issue 35, decisions.md section 6): the admin API's one-time links and the CLI
 * verb, the session they start (cookie attributes, stored hashed, idle timeout, absolute lifetime,
 * sign-out), the rate limits, and the separation of credentials: console endpoints never accept an
 * API key, /v1 and /mcp never accept a session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../src/admin/cli-commands.js';
import { UsageError } from '../../src/admin/cli-input.js';
import { AppError } from '../../src/http/errors.js';
import { admin, call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { consoleCall, consoleOrigin, issueLink, postSignIn, signInAs } from '../support/console.js';

const MINUTE = 60_000;

async function tableText(ctx: TestContext, table: 'console_sessions' | 'console_sign_in_links'): Promise<string> {
  return JSON.stringify(await ctx.deps.db.selectFrom(table).selectAll().execute());
}

describeEachDatabase('console sign-in links', (get) => {
  test('the admin API issues a single-use link valid for 15 minutes, stored only hashed', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const link = await issueLink(ctx, t.user.id);
    assert.match(link.url, new RegExp(`^${ctx.config.publicBaseUrl}/console/sign-in#token=[A-Za-z0-9_-]{43}$`));
    assert.equal(Date.parse(link.expiresAt), ctx.clock.now() + 15 * MINUTE);
    assert.equal((await tableText(ctx, 'console_sign_in_links')).includes(link.token), false, 'the token is not stored');

    const first = await postSignIn(ctx, link.token);
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json().code, 'CONSOLE_SIGN_IN');
    assert.equal(first.json().data.user.id, t.user.id);
    const again = await postSignIn(ctx, link.token);
    assert.equal(again.statusCode, 401);
    assert.equal(again.json().code, 'UNAUTHENTICATED');
  });

  test('a link is refused once its 15 minutes are over, and an unknown one always', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const link = await issueLink(ctx, t.user.id);
    ctx.clock.advance(15 * MINUTE);
    const late = await postSignIn(ctx, link.token);
    assert.equal(late.statusCode, 401, late.body);
    assert.match(late.json().message, /expired/);
    const forged = await postSignIn(ctx, 'A'.repeat(43));
    assert.equal(forged.statusCode, 401);
  });

  test('opening the link (GET) consumes nothing: only the POST signs in', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const link = await issueLink(ctx, t.user.id);
    const page = await ctx.app.inject({ method: 'GET', url: new URL(link.url).pathname });
    assert.ok(page.statusCode === 200 || page.statusCode === 503, `the page, or 503 when the console is not built: ${page.statusCode}`);
    assert.equal(page.headers['set-cookie'], undefined);
    assert.equal((await postSignIn(ctx, link.token)).statusCode, 200);
  });

  test('links for an unknown user are 404; a malformed id is 400', async () => {
    const ctx = get();
    const res = await admin(ctx, '/admin/v1/users/0190a000-0000-7000-8000-000000000000/sign-in-links');
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().code, 'NOT_FOUND');
    assert.equal((await admin(ctx, '/admin/v1/users/nope/sign-in-links')).statusCode, 400);
    assert.equal((await admin(ctx, '/admin/v1/users/0190a000-0000-7000-8000-000000000000/sign-in-links', {}, 'wrong-token-0123456789')).statusCode, 401);
  });

  test('link issuing is rate limited per user (5 per 15 minutes) with Retry-After', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (let i = 0; i < 5; i++) await issueLink(ctx, t.user.id);
    const refused = await admin(ctx, `/admin/v1/users/${t.user.id}/sign-in-links`);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json().code, 'RATE_LIMITED');
    assert.equal(refused.json().details.limit, 'CONSOLE_SIGN_IN_LINKS');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    const other = await seedTenant(ctx.deps);
    await issueLink(ctx, other.user.id); // another user is not affected
    ctx.clock.advance(15 * MINUTE);
    await issueLink(ctx, t.user.id);
  });

  test('the CLI verb `users sign-in-link --email E` issues a link that signs the user in', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const verb = COMMANDS['users sign-in-link']!;
    const input = verb.parse({ email: t.user.email.toUpperCase() } as never);
    const out = (await verb.run(ctx.deps, input)) as { url: string; expiresAt: string };
    assert.equal(Date.parse(out.expiresAt), ctx.clock.now() + 15 * MINUTE);
    const token = new URL(out.url).hash.replace('#token=', '');
    assert.equal((await postSignIn(ctx, token)).statusCode, 200);
    assert.throws(() => verb.parse({} as never), UsageError);
    assert.throws(() => verb.parse({ email: 'not-an-email' } as never), UsageError);
    await assert.rejects(verb.run(ctx.deps, verb.parse({ email: 'nobody@example.com' } as never)), (err) => err instanceof AppError && err.code === 'NOT_FOUND');
  });

  test('sign-in must come from the console origin and is rate limited per client address', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const { token } = await issueLink(ctx, t.user.id);
    for (const headers of [{}, { origin: 'https://evil.example' }, { origin: 'null' }] as Record<string, string>[]) {
      const res = await postSignIn(ctx, token, headers);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'FORBIDDEN_ORIGIN');
    }
    assert.equal((await postSignIn(ctx, token)).statusCode, 200, 'the refused attempts did not burn the link');
    const address = '203.0.113.7';
    for (let i = 0; i < 10; i++) assert.equal((await postSignIn(ctx, 'B'.repeat(43), undefined, address)).statusCode, 401);
    const limited = await postSignIn(ctx, 'B'.repeat(43), undefined, address);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().details.limit, 'CONSOLE_SIGN_IN');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    ctx.clock.advance(MINUTE);
    assert.equal((await postSignIn(ctx, 'B'.repeat(43), undefined, address)).statusCode, 401);
  });

  test('bad sign-in bodies are 400 INVALID_REQUEST', async () => {
    const ctx = get();
    for (const payload of [{}, { token: 5 }, { token: 'short' }, { token: 'x'.repeat(43), extra: 1 }, { token: 'bad token with spaces here ok' }]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/console/api/sign-in', headers: { origin: consoleOrigin(ctx) }, payload, remoteAddress: '198.51.100.9' });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().code, 'INVALID_REQUEST');
    }
  });
});

describeEachDatabase('console sessions', (get) => {
  test('the cookie is HttpOnly, SameSite=Lax, Path=/, not Secure over http; the token is stored hashed', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    assert.match(login.setCookie, /^was_console=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/);
    const token = login.cookie.split('=')[1]!;
    assert.equal((await tableText(ctx, 'console_sessions')).includes(token), false);
    const me = await consoleCall(ctx, login, 'GET', '/console/api/me');
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.headers['cache-control'], 'no-store');
    assert.equal(me.json().data.user.email, t.user.email);
    assert.equal(me.json().data.csrfToken, login.csrfToken);
    assert.deepEqual(me.json().data.workspaces.map((w: { id: string }) => w.id), [t.workspace.id]);
  });

  test('no cookie, a forged cookie or a malformed cookie is 401', async () => {
    const ctx = get();
    for (const cookie of [undefined, 'was_console=' + 'C'.repeat(43), 'was_console=../../etc', 'other=1']) {
      const res = await ctx.app.inject({ method: 'GET', url: '/console/api/me', headers: cookie ? { cookie } : {} });
      assert.equal(res.statusCode, 401, String(cookie));
      assert.equal(res.json().code, 'UNAUTHENTICATED');
    }
  });

  test('a session ends after an hour without requests', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    ctx.clock.advance(59 * MINUTE);
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200, 'activity keeps it alive');
    ctx.clock.advance(59 * MINUTE);
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200);
    ctx.clock.advance(60 * MINUTE);
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 401, 'idle for an hour');
  });

  test('a session ends 12 hours after sign-in however active it is', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    for (let i = 0; i < 23; i++) {
      ctx.clock.advance(30 * MINUTE);
      assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200, `after ${(i + 1) * 30} minutes`);
    }
    ctx.clock.advance(30 * MINUTE);
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 401);
  });

  test('sign-out ends the session (server side) and clears the cookie; other sessions stay', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const other = await signInAs(ctx, t.user.id);
    const out = await consoleCall(ctx, login, 'POST', '/console/api/sign-out');
    assert.equal(out.statusCode, 200, out.body);
    assert.match(String(out.headers['set-cookie']), /^was_console=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/);
    assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 401, 'the old cookie is refused');
    assert.equal((await consoleCall(ctx, other, 'GET', '/console/api/me')).statusCode, 200);
  });

  test('console endpoints never accept an API key, even beside a valid session', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    for (const [method, url] of [['GET', '/console/api/me'], ['GET', `/console/api/workspaces/${t.workspace.id}/keys`], ['POST', `/console/api/workspaces/${t.workspace.id}/keys`]] as const) {
      const alone = await ctx.app.inject({ method, url, headers: { authorization: `Bearer ${t.secret}`, origin: consoleOrigin(ctx) } });
      assert.equal(alone.statusCode, 401, `${method} ${url} with a key alone`);
      const both = await consoleCall(ctx, login, method, url, { headers: { authorization: `Bearer ${t.secret}` }, body: method === 'POST' ? {} : undefined });
      assert.equal(both.statusCode, 401, `${method} ${url} with a key beside the session`);
      assert.equal(both.json().code, 'UNAUTHENTICATED');
    }
  });

  test('the public API and /mcp never accept a session cookie', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const login = await signInAs(ctx, t.user.id);
    const v1 = await call(ctx, 'GET', '/v1/workspaces', { workspaceId: t.workspace.id, headers: { cookie: login.cookie } });
    assert.equal(v1.statusCode, 401);
    const v1ws = await call(ctx, 'GET', '/v1/usage', { workspaceId: t.workspace.id, headers: { cookie: login.cookie, 'x-csrf-token': login.csrfToken } });
    assert.equal(v1ws.statusCode, 401);
    const mcp = await ctx.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { cookie: login.cookie, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    assert.equal(mcp.statusCode, 401, mcp.body);
    assert.equal((await call(ctx, 'GET', '/v1/workspaces', { secret: t.secret, workspaceId: t.workspace.id })).statusCode, 200, 'the key itself works');
  });
});

describeEachDatabase(
  'console sessions behind https',
  (get) => {
    test('with an https PUBLIC_BASE_URL the cookie is Secure and uses the __Host- prefix', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const login = await signInAs(ctx, t.user.id);
      assert.match(login.setCookie, /^__Host-was_console=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
      assert.equal((await consoleCall(ctx, login, 'GET', '/console/api/me')).statusCode, 200);
      const plain = await ctx.app.inject({ method: 'GET', url: '/console/api/me', headers: { cookie: login.cookie.replace('__Host-', '') } });
      assert.equal(plain.statusCode, 401, 'the unprefixed name means nothing here');
    });
  },
  { env: { PUBLIC_BASE_URL: 'https://console.example.com' } },
);
