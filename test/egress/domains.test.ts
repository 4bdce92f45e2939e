/**
 * Workspace domains through the admin API (decisions.md section 4): hostname normalisation,
 * verification by operator, DNS TXT record and HTTPS file, removal, and the rule that a hostname
 * is verified in at most one workspace. DNS TXT answers come from the harness's fake resolver;
 * the HTTPS check goes through the real egress client with name resolution replaced in-process,
 * so no test leaves the machine (and none needs a certificate).
 */
import { afterEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { admin, describeEachDatabase, type TestContext } from '../support/harness.js';
import { seedTenant } from '../support/seed.js';
import { isHostnameVerifiedFor, normaliseHostname } from '../../src/modules/domains/service.js';
import { findDomain } from '../../src/modules/domains/store.js';
import { expectOk, assertError } from '../support/assertions.js';

const UNKNOWN_ID = '01890000-0000-7000-8000-000000000000';
let counter = 0;

/** A hostname no other test uses (tests share one database per suite). */
function host(label = 'hooks'): string {
  counter += 1;
  return `${label}.t${counter}-${process.pid}.example.com`;
}



async function addDomain(ctx: TestContext, workspaceId: string, hostname: string) {
  return expectOk(await admin(ctx, `/admin/v1/workspaces/${workspaceId}/domains`, { hostname }), 'ADMIN_DOMAINS_ADD').domain;
}

function verify(ctx: TestContext, workspaceId: string, hostname: string, method: string) {
  return admin(ctx, `/admin/v1/workspaces/${workspaceId}/domains/${encodeURIComponent(hostname)}/verify`, { method });
}

type LookupAnswer = { address: string; family: number }[] | NodeJS.ErrnoException;

/** Replaces name resolution (node:dns lookup, which the egress client's pinned lookup calls) for one test. */
function fakeLookup(answers: Record<string, LookupAnswer>): string[] {
  const asked: string[] = [];
  mock.method(dns, 'lookup', (hostname: string, _options: unknown, callback: (err: Error | null, addresses?: unknown) => void) => {
    asked.push(hostname);
    const answer = answers[hostname] ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    if (answer instanceof Error) process.nextTick(() => callback(answer));
    else process.nextTick(() => callback(null, answer));
  });
  return asked;
}

afterEach(() => mock.restoreAll());

test('hostname normalisation: lower-case, trailing dot removed, IDN to punycode, whitespace trimmed', () => {
  assert.equal(normaliseHostname('Hooks.Example.COM.'), 'hooks.example.com');
  assert.equal(normaliseHostname('  hooks.example.com  '), 'hooks.example.com');
  assert.equal(normaliseHostname('bücher.example'), 'xn--bcher-kva.example');
  assert.equal(normaliseHostname('BÜCHER.Example.'), 'xn--bcher-kva.example');
  assert.equal(normaliseHostname('例子.测试'), 'xn--fsqu00a.xn--0zwm56d');
  assert.equal(normaliseHostname('xn--bcher-kva.example'), 'xn--bcher-kva.example');
  assert.equal(normaliseHostname('a-b.c-d.example'), 'a-b.c-d.example');
});

test('hostname normalisation: IP literals, single labels, bad characters and bad lengths are refused', () => {
  const refused = [
    '127.0.0.1',
    '10.1.2.3',
    '127.1',
    '0x7f.1',
    '2130706433',
    '::1',
    '[::1]',
    '[2001:db8::1]',
    'localhost',
    'localhost.',
    'com',
    '',
    '.',
    ' ',
    'exa mple.com',
    'a_b.example.com',
    'example..com',
    '.example.com',
    'example.com..',
    '-a.example.com',
    'a-.example.com',
    'exa%41mple.com',
    'example.com/path',
    'https://example.com',
    'user@example.com',
    'example.com:443',
    'ex*ample.com',
    'example.123',
    `${'a'.repeat(64)}.example.com`,
    `${'a.'.repeat(127)}com`,
  ];
  for (const input of refused) {
    assert.throws(() => normaliseHostname(input), (err: { code?: string }) => err.code === 'INVALID_REQUEST', `"${input}" should be refused`);
  }
  // The longest valid names pass: 63-character labels, 253 characters in all.
  assert.equal(normaliseHostname(`${'a'.repeat(63)}.example.com`), `${'a'.repeat(63)}.example.com`);
  const longest = `${'a'.repeat(61)}.${'b'.repeat(61)}.${'c'.repeat(61)}.${'d'.repeat(63)}.com`;
  assert.equal(longest.length, 253);
  assert.equal(normaliseHostname(longest), longest);
});

describeEachDatabase('domains', (get) => {
  test('domains add: returns {domain} pending with a verification token, hostname normalised (ADMIN_DOMAINS_ADD)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    const domain = await addDomain(ctx, t.workspace.id, `${hostname.toUpperCase()}.`);
    assert.equal(domain.hostname, hostname);
    assert.equal(domain.workspaceId, t.workspace.id);
    assert.equal(domain.status, 'pending');
    assert.match(domain.verificationToken, /^service-verify=[A-Za-z0-9_-]{32}$/);
    assert.equal(domain.verifiedMethod, null);
    assert.equal(domain.verifiedAt, null);
    const idn = await addDomain(ctx, t.workspace.id, `bücher.t${++counter}.example`);
    assert.equal(idn.hostname, `xn--bcher-kva.t${counter}.example`);
  });

  test('domains add: adding the same hostname again returns the same row and token (also when concurrent)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    const first = await addDomain(ctx, t.workspace.id, hostname);
    const again = await addDomain(ctx, t.workspace.id, hostname.toUpperCase());
    assert.equal(again.verificationToken, first.verificationToken);
    const other = host();
    const results = await Promise.all([1, 2, 3].map(() => admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname: other })));
    const tokens = new Set(results.map((r) => expectOk(r, 'ADMIN_DOMAINS_ADD').domain.verificationToken));
    assert.equal(tokens.size, 1);
  });

  test('domains add: IP literals, single labels and bad characters are 400; unknown workspace 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (const hostname of ['127.0.0.1', '[::1]', '0x7f.1', 'localhost', 'bad_name.example.com', 'exa mple.com', 'example.com/x', '']) {
      assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname }), 400, 'INVALID_REQUEST');
    }
    assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains`, { hostname: 42 }), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, `/admin/v1/workspaces/${UNKNOWN_ID}/domains`, { hostname: host() }), 404, 'NOT_FOUND');
  });

  test('domains verify by operator: status verified with method and time (ADMIN_DOMAINS_VERIFY)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    await addDomain(ctx, t.workspace.id, hostname);
    ctx.clock.advance(1000);
    const domain = expectOk(await verify(ctx, t.workspace.id, hostname, 'operator'), 'ADMIN_DOMAINS_VERIFY').domain;
    assert.equal(domain.status, 'verified');
    assert.equal(domain.verifiedMethod, 'operator');
    assert.equal(domain.verifiedAt, new Date(ctx.clock.now()).toISOString());
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), true);
  });

  test('domains verify by dns: the TXT record _service-verify.HOSTNAME holding the token verifies (chunks joined)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    const { verificationToken } = await addDomain(ctx, t.workspace.id, hostname);
    ctx.txtRecords.set(`_service-verify.${hostname}`, [['v=spf1 -all'], [verificationToken.slice(0, 10), verificationToken.slice(10)]]);
    const domain = expectOk(await verify(ctx, t.workspace.id, hostname, 'dns'), 'ADMIN_DOMAINS_VERIFY').domain;
    assert.equal(domain.status, 'verified');
    assert.equal(domain.verifiedMethod, 'dns');
  });

  test('domains verify by dns: a wrong or missing TXT record is 400 DOMAIN_NOT_VERIFIED and the domain stays pending', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    const { verificationToken } = await addDomain(ctx, t.workspace.id, hostname);
    assertError(await verify(ctx, t.workspace.id, hostname, 'dns'), 400, 'DOMAIN_NOT_VERIFIED');
    ctx.txtRecords.set(`_service-verify.${hostname}`, [[`${verificationToken}x`], ['service-verify=someone-else']]);
    assertError(await verify(ctx, t.workspace.id, hostname, 'dns'), 400, 'DOMAIN_NOT_VERIFIED');
    // The record must be at _service-verify.HOSTNAME, not at the hostname itself.
    ctx.txtRecords.set(hostname, [[verificationToken]]);
    assertError(await verify(ctx, t.workspace.id, hostname, 'dns'), 400, 'DOMAIN_NOT_VERIFIED');
    // Another workspace's token for the same hostname does not verify this one.
    const other = await seedTenant(ctx.deps);
    const foreign = await addDomain(ctx, other.workspace.id, hostname);
    ctx.txtRecords.set(`_service-verify.${hostname}`, [[foreign.verificationToken]]);
    assertError(await verify(ctx, t.workspace.id, hostname, 'dns'), 400, 'DOMAIN_NOT_VERIFIED');
    assert.equal((await findDomain(ctx.deps.db, t.workspace.id, hostname))?.status, 'pending');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), false);
  });

  test('domains verify by http: a hostname that does not resolve is 400 DOMAIN_NOT_VERIFIED', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host('nowhere');
    await addDomain(ctx, t.workspace.id, hostname);
    const asked = fakeLookup({});
    assertError(await verify(ctx, t.workspace.id, hostname, 'http'), 400, 'DOMAIN_NOT_VERIFIED');
    assert.deepEqual(asked, [hostname], 'the check went through the egress client to https://HOSTNAME');
    assert.equal((await findDomain(ctx.deps.db, t.workspace.id, hostname))?.status, 'pending');
  });

  test('domains verify by http: a hostname resolving to a private, loopback or link-local address is refused (400 DOMAIN_NOT_VERIFIED)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    for (const address of ['10.0.0.5', '127.0.0.1', '192.168.1.1', '169.254.169.254', '::1', 'fd00::1']) {
      const hostname = host('private');
      await addDomain(ctx, t.workspace.id, hostname);
      const asked = fakeLookup({ [hostname]: [{ address, family: address.includes(':') ? 6 : 4 }] });
      assertError(await verify(ctx, t.workspace.id, hostname, 'http'), 400, 'DOMAIN_NOT_VERIFIED');
      assert.deepEqual(asked, [hostname]);
      mock.restoreAll();
      assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), false);
    }
    // One public and one private answer: refused as well (every answer must pass).
    const mixed = host('mixed');
    await addDomain(ctx, t.workspace.id, mixed);
    fakeLookup({ [mixed]: [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }] });
    assertError(await verify(ctx, t.workspace.id, mixed, 'http'), 400, 'DOMAIN_NOT_VERIFIED');
  });

  test('domains verify: a domain not added to this workspace is 404; an unknown method 400', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const hostname = host();
    await addDomain(ctx, a.workspace.id, hostname);
    assertError(await verify(ctx, b.workspace.id, hostname, 'operator'), 404, 'NOT_FOUND');
    assertError(await verify(ctx, a.workspace.id, host(), 'operator'), 404, 'NOT_FOUND');
    assertError(await verify(ctx, UNKNOWN_ID, hostname, 'operator'), 404, 'NOT_FOUND');
    assertError(await verify(ctx, a.workspace.id, hostname, 'email'), 400, 'INVALID_REQUEST');
    assertError(await admin(ctx, `/admin/v1/workspaces/${a.workspace.id}/domains/${hostname}/verify`, {}), 400, 'INVALID_REQUEST');
    assertError(await verify(ctx, a.workspace.id, '127.0.0.1', 'operator'), 400, 'INVALID_REQUEST');
  });

  test('one verified workspace per hostname: verifying in workspace B moves it and returns A to pending', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const hostname = host();
    await addDomain(ctx, a.workspace.id, hostname);
    const bDomain = await addDomain(ctx, b.workspace.id, hostname);
    expectOk(await verify(ctx, a.workspace.id, hostname, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, a.workspace.id, hostname), true);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, b.workspace.id, hostname), false);

    ctx.txtRecords.set(`_service-verify.${hostname}`, [[bDomain.verificationToken]]);
    expectOk(await verify(ctx, b.workspace.id, hostname, 'dns'), 'ADMIN_DOMAINS_VERIFY');
    const aRow = await findDomain(ctx.deps.db, a.workspace.id, hostname);
    assert.equal(aRow?.status, 'pending');
    assert.equal(aRow?.verifiedMethod, null);
    assert.equal(aRow?.verifiedAt, null);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, a.workspace.id, hostname), false);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, b.workspace.id, hostname), true);

    // And back again.
    expectOk(await verify(ctx, a.workspace.id, hostname, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assert.equal((await findDomain(ctx.deps.db, b.workspace.id, hostname))?.status, 'pending');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, a.workspace.id, hostname), true);
  });

  test('one verified workspace per hostname: concurrent verifications in several workspaces leave exactly one verified row', async () => {
    const ctx = get();
    const tenants = await Promise.all([1, 2, 3, 4].map(() => seedTenant(ctx.deps)));
    const hostname = host();
    for (const t of tenants) await addDomain(ctx, t.workspace.id, hostname);
    const results = await Promise.all(tenants.map((t) => verify(ctx, t.workspace.id, hostname, 'operator')));
    for (const r of results) expectOk(r, 'ADMIN_DOMAINS_VERIFY');
    const verified = await ctx.deps.db.selectFrom('domains').select('workspace_id').where('hostname', '=', hostname).where('status', '=', 'verified').execute();
    assert.equal(verified.length, 1);
    const flags = await Promise.all(tenants.map((t) => isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname)));
    assert.equal(flags.filter(Boolean).length, 1);
  });

  test('isHostnameVerifiedFor: exact hostnames only (a verified parent does not cover a subdomain, nor the reverse); input normalised', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const parent = host('parent');
    await addDomain(ctx, t.workspace.id, parent);
    expectOk(await verify(ctx, t.workspace.id, parent, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, parent), true);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, `${parent.toUpperCase()}.`), true);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, `hooks.${parent}`), false);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, `evil-${parent}`), false);
    const child = `api.${host('child')}`;
    await addDomain(ctx, t.workspace.id, child);
    expectOk(await verify(ctx, t.workspace.id, child, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, child.slice('api.'.length)), false);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, '127.0.0.1'), false);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, 'not a host'), false);
  });

  test('isHostnameVerifiedFor: an IDN hostname verified once matches its Unicode and punycode spellings', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const unicode = `bücher.t${++counter}-${process.pid}.example`;
    const domain = await addDomain(ctx, t.workspace.id, unicode);
    expectOk(await verify(ctx, t.workspace.id, unicode, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, domain.hostname), true);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, unicode), true);
  });

  test('domains remove: returns {removed:true} (ADMIN_DOMAINS_REMOVE), ends verification, and a second remove is 404', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps);
    const hostname = host();
    await addDomain(ctx, t.workspace.id, hostname);
    expectOk(await verify(ctx, t.workspace.id, hostname, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    const removed = expectOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname.toUpperCase()}/remove`), 'ADMIN_DOMAINS_REMOVE');
    assert.deepEqual(removed, { removed: true });
    assert.equal(await findDomain(ctx.deps.db, t.workspace.id, hostname), undefined);
    assert.equal(await isHostnameVerifiedFor(ctx.deps, t.workspace.id, hostname), false);
    assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/remove`), 404, 'NOT_FOUND');
    assertError(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/domains/${hostname}/remove`, { force: true }), 400, 'INVALID_REQUEST');
  });

  test('domains remove: only the workspace that has the hostname can remove it; the other workspace gets 404 and keeps nothing of it', async () => {
    const ctx = get();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    const hostname = host();
    await addDomain(ctx, a.workspace.id, hostname);
    expectOk(await verify(ctx, a.workspace.id, hostname, 'operator'), 'ADMIN_DOMAINS_VERIFY');
    assertError(await admin(ctx, `/admin/v1/workspaces/${b.workspace.id}/domains/${hostname}/remove`), 404, 'NOT_FOUND');
    assert.equal(await isHostnameVerifiedFor(ctx.deps, a.workspace.id, hostname), true);
    const unicode = `bücher.t${++counter}-${process.pid}.example`;
    await addDomain(ctx, a.workspace.id, unicode);
    expectOk(await admin(ctx, `/admin/v1/workspaces/${a.workspace.id}/domains/${encodeURIComponent(unicode)}/remove`), 'ADMIN_DOMAINS_REMOVE');
  });
});
