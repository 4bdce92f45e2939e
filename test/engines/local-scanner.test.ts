/**
 * security.scan on the `scanner` engine (decisions.md section 5, "security.scan"): real scans of
 * real HTTPS sites on loopback, one per defect (test/support/scan-sites.ts), through the public API
 * and the job worker. Each site's verdicts are asserted check by check; every scan stays within
 * the request bound, one request at a time; admission and run time refuse hosts the workspace has
 * not verified; a failure mid-scan resumes after the completed checks and is not charged twice;
 * unreachable and endlessly slow targets end in clear errors with their holds settled. The egress
 * client's TLS probe is checked on its own: same address policy, same pinned lookup.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEgress } from '../../src/egress/client.js';
import { EgressError } from '../../src/egress/types.js';
import { compileStrict } from '../../src/http/validation.js';
import { SECURITY_CHECKS, securityScan, type SecurityCheckId } from '../../src/operations/security-scan.js';
import { checkCost } from '../../src/providers/local/scanner.js';
import { MAX_REQUESTS_PER_ATTEMPT } from '../../src/providers/local/scan-session.js';
import { assertError } from '../support/assertions.js';
import { testDatabaseNames } from '../support/databases.js';
import { admin, call, createTestContext, disposeTestContext, type TestContext } from '../support/harness.js';
import { requireTestCa, useLocalhostNames } from '../support/https-receiver.js';
import { balance, drain, getJob, readCompleteOutput, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { refusingPort, SCAN_ADDRESS, ScanSites, type ScanSite, type SiteSpec } from '../support/scan-sites.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { verifyHostname } from '../support/webhooks.js';

const PRICE = 15_000;
const ENV = { EGRESS_ALLOW_CIDRS: `${SCAN_ADDRESS}/32` };

type Status = 'pass' | 'warn' | 'fail';
type Verdicts = Record<SecurityCheckId, Status>;
interface CheckResult {
  id: SecurityCheckId;
  status: Status;
  summary: string;
  evidence: Record<string, unknown>;
  remedy?: string;
}

const ALL_PASS = Object.fromEntries(SECURITY_CHECKS.map((id) => [id, 'pass'])) as Verdicts;
const verdicts = (changes: Partial<Verdicts>): Verdicts => ({ ...ALL_PASS, ...changes });

/** The headers of a well-configured site. */
const GOOD_HEADERS = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'content-security-policy': "default-src 'self'; script-src 'self' https://cdn.example; frame-ancestors 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'set-cookie': 'session=s3cr3t-session-value; Path=/; Secure; HttpOnly; SameSite=Lax',
};
/** Relative and https subresources; a plain-HTTP link is navigation, not a load. */
const GOOD_HTML =
  '<!doctype html><html><head><link rel="stylesheet" href="/app.css"><script src="https://cdn.example/app.js"></script></head>' +
  '<body><img src="/logo.png" srcset="/logo-2x.png 2x"><a href="http://example.com/">elsewhere</a><form action="/search"></form></body></html>';

interface SiteCase {
  rule: string;
  spec: SiteSpec;
  expected: Verdicts;
}

const SITE_CASES: SiteCase[] = [
  {
    rule: 'a well-configured site passes every check, even when it answers 200 with its home page for every path',
    spec: { hostname: 'good.scan.localhost', headers: GOOD_HEADERS, html: GOOD_HTML, unknownPaths: 'home' },
    expected: ALL_PASS,
  },
  {
    rule: 'an expired certificate fails certificate-expiry (its chain cannot be judged while expired: certificate-trust warns)',
    spec: { hostname: 'expired.scan.localhost', certificate: 'expired', headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'certificate-expiry': 'fail', 'certificate-trust': 'warn' }),
  },
  {
    rule: 'a self-signed certificate fails certificate-trust, and the other checks still judge the site',
    spec: { hostname: 'self-signed.scan.localhost', certificate: 'self-signed', headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'certificate-trust': 'fail' }),
  },
  {
    rule: 'an expired self-signed certificate fails both certificate-trust and certificate-expiry',
    spec: { hostname: 'stale.scan.localhost', certificate: 'expired-self-signed', headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'certificate-trust': 'fail', 'certificate-expiry': 'fail' }),
  },
  {
    rule: 'a trusted certificate for another name fails certificate-hostname only',
    spec: { hostname: 'mismatch.scan.localhost', certificate: { trustedFor: 'other.scan.localhost' }, headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'certificate-hostname': 'fail' }),
  },
  {
    rule: 'a site without security headers, served over plain HTTP without a redirect, fails https-redirect, hsts, content-security-policy and frame-protection and warns on content-type-options and referrer-policy',
    spec: { hostname: 'bare.scan.localhost', plainHttp: 'page', html: '<!doctype html><p>bare</p>' },
    expected: verdicts({
      'https-redirect': 'fail',
      hsts: 'fail',
      'content-security-policy': 'fail',
      'content-type-options': 'warn',
      'frame-protection': 'fail',
      'referrer-policy': 'warn',
    }),
  },
  {
    rule: 'cookies without Secure, HttpOnly or SameSite fail the cookies check, and their values never reach the result',
    spec: {
      hostname: 'cookies.scan.localhost',
      headers: { ...GOOD_HEADERS, 'set-cookie': ['sid=s3cr3t-session-value; Path=/', 'theme=dark; Secure'] },
      html: GOOD_HTML,
    },
    expected: verdicts({ cookies: 'fail' }),
  },
  {
    rule: 'a wildcard CORS origin together with credentials fails the cors check',
    spec: {
      hostname: 'cors.scan.localhost',
      headers: { ...GOOD_HEADERS, 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true' },
      html: GOOD_HTML,
    },
    expected: verdicts({ cors: 'fail' }),
  },
  {
    rule: 'a script and an image loaded over plain HTTP fail the mixed-content check',
    spec: {
      hostname: 'mixed.scan.localhost',
      headers: GOOD_HEADERS,
      html: '<!doctype html><html><head><script src="http://cdn.example/app.js"></script></head><body><img src="http://cdn.example/logo.png"></body></html>',
    },
    expected: verdicts({ 'mixed-content': 'fail' }),
  },
  {
    rule: 'an exposed /.git/HEAD and /.env fail exposed-files, and their contents never reach the result',
    spec: {
      hostname: 'exposed.scan.localhost',
      headers: GOOD_HEADERS,
      html: GOOD_HTML,
      files: {
        '/.git/HEAD': { body: 'ref: refs/heads/main\n', contentType: 'text/plain' },
        '/.env': { body: '# production\nDB_PASSWORD=hunter2-database-secret\n', contentType: 'text/plain' },
      },
    },
    expected: verdicts({ 'exposed-files': 'fail' }),
  },
  {
    rule: 'a server that still accepts TLS 1.0 and 1.1 warns on tls-protocol',
    spec: { hostname: 'legacy.scan.localhost', legacyTls: 'also', headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'tls-protocol': 'warn' }),
  },
  {
    rule: 'a server that speaks nothing newer than TLS 1.1 fails tls-protocol, and its certificate and answers are still judged',
    spec: { hostname: 'ancient.scan.localhost', legacyTls: 'only', headers: GOOD_HEADERS, html: GOOD_HTML },
    expected: verdicts({ 'tls-protocol': 'fail' }),
  },
  {
    rule: 'a page that never ends is read up to its bound and judged by its headers (mixed-content warns that it was not inspected)',
    spec: { hostname: 'endless.scan.localhost', endlessPage: true, headers: GOOD_HEADERS },
    expected: verdicts({ 'mixed-content': 'warn' }),
  },
];

const sites = new ScanSites();
const bySpec = new Map<string, ScanSite>();
let flaky: ScanSite;
let slow: ScanSite;
let restoreDns = () => {};
let dir: string;

before(async () => {
  requireTestCa();
  restoreDns = useLocalhostNames(SCAN_ADDRESS);
  await sites.startPlainHttp();
  for (const c of SITE_CASES) bySpec.set(c.spec.hostname, await sites.add(c.spec));
  flaky = await sites.add({ hostname: 'flaky.scan.localhost', headers: GOOD_HEADERS, html: GOOD_HTML });
  slow = await sites.add({ hostname: 'slow.scan.localhost', headers: GOOD_HEADERS, html: GOOD_HTML });
  dir = mkdtempSync(join(tmpdir(), 'was-scanner-'));
});

after(async () => {
  await sites.close();
  restoreDns();
  rmSync(dir, { recursive: true, force: true });
});

function providersFile(name: string, route: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      providers: { local: { type: 'local' } },
      operations: { 'security.scan': { provider: 'local', engine: 'scanner', price: { perRunMillicents: PRICE }, ...route } },
    }),
  );
  return path;
}

/** A tenant with credits whose workspace has verified `hostname` (the operator's word, admin API). */
async function tenantFor(ctx: TestContext, hostname: string): Promise<Tenant> {
  const tenant = await seedTenant(ctx.deps, { credits: 1_000_000 });
  await verifyHostname(ctx, tenant.workspace.id, hostname);
  return tenant;
}

async function startScan(ctx: TestContext, tenant: Tenant, url: string): Promise<string> {
  const res = await run(ctx, tenant, 'security.scan', { url });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.json().data.maximumCostMillicents, PRICE);
  return res.json().data.jobId as string;
}

async function resultOf(ctx: TestContext, tenant: Tenant, jobId: string): Promise<{ url: string; checks: CheckResult[] }> {
  return JSON.parse((await readCompleteOutput(ctx, tenant, jobId)).bytes.toString('utf8'));
}

function verdictsOf(checks: CheckResult[]): Verdicts {
  return Object.fromEntries(checks.map((c) => [c.id, c.status])) as Verdicts;
}

/** What the site saw of one scan stays within the bound, one request at a time. */
function assertBounded(site: ScanSite): void {
  assert.ok(site.requests.length + site.probes <= MAX_REQUESTS_PER_ATTEMPT, `${site.hostname}: ${site.requests.length} requests and ${site.probes} handshake probes`);
  assert.ok(site.requests.length > 0);
  assert.equal(site.maxInFlight, 1, 'one request at a time');
}

const validateResult = compileStrict(securityScan.resultSchema as object);

test('security.scan pricing: the run price spread over the checks sums to it, and what is left after k checks fits the retry reservation', () => {
  for (const total of [0, 1, 13, 14, 15, 999, PRICE, 1_000_003]) {
    const n = SECURITY_CHECKS.length;
    let paid = 0;
    for (let k = 1; k <= n; k++) {
      const cost = checkCost(total, n, k);
      assert.ok(cost >= 0);
      paid += cost;
      // jobs/service.ts reserves ceil(price × stepsLeft / steps) for a retry.
      assert.ok(total - paid <= Math.ceil((total * (n - k)) / n), `total ${total}, after ${k}`);
    }
    assert.equal(paid, total);
  }
});

for (const dbName of testDatabaseNames()) {
  describe(`security.scan on the scanner engine [${dbName}]`, () => {
    let ctx: TestContext;
    let shortCtx: TestContext;
    before(async () => {
      ctx = await createTestContext(dbName, { env: { ...ENV, PROVIDERS_FILE: providersFile('scanner.json') } });
      // The slow site's context: the attempt's deadline (timeoutSeconds) is 1 s.
      shortCtx = await createTestContext(dbName, { env: { ...ENV, PROVIDERS_FILE: providersFile('scanner-short.json', { timeoutSeconds: 1 }) } });
    });
    after(async () => {
      await disposeTestContext(ctx);
      await disposeTestContext(shortCtx);
    });

    for (const c of SITE_CASES) {
      test(`security.scan verdicts: ${c.rule}`, async () => {
        const site = bySpec.get(c.spec.hostname)!;
        const tenant = await tenantFor(ctx, site.hostname);
        site.reset();
        const jobId = await startScan(ctx, tenant, site.url());
        await drain(ctx);
        const job = await getJob(ctx, tenant, jobId);
        assert.equal(job.status, 'completed', JSON.stringify(job));
        assert.equal(job.costMillicents, PRICE);
        const result = await resultOf(ctx, tenant, jobId);
        assert.ok(validateResult(result), JSON.stringify(validateResult.errors));
        assert.deepEqual(
          result.checks.map((r) => r.id),
          [...SECURITY_CHECKS],
          'every check, in order',
        );
        assert.deepEqual(verdictsOf(result.checks), c.expected, JSON.stringify(result.checks.filter((r) => r.status !== c.expected[r.id])));
        for (const r of result.checks) {
          assert.ok(r.summary.length > 0 && typeof r.evidence === 'object', r.id);
          if (r.status !== 'pass') assert.ok(r.remedy && r.remedy.length > 0, `${r.id} has a remedy`);
        }
        const text = JSON.stringify(result);
        assert.ok(!text.includes('s3cr3t-session-value') && !text.includes('hunter2'), 'no cookie value or file content in the result');
        assertBounded(site);
        assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
        await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
      });
    }

    test('security.scan evidence: each verdict carries what it was judged on', async () => {
      // One scan of the exposed site and one of the cookie site: the evidence names the finding.
      const exposed = bySpec.get('exposed.scan.localhost')!;
      const tenant = await tenantFor(ctx, exposed.hostname);
      const jobId = await startScan(ctx, tenant, exposed.url());
      await drain(ctx);
      const checks = (await resultOf(ctx, tenant, jobId)).checks;
      const byId = new Map(checks.map((c) => [c.id, c]));
      const exposure = byId.get('exposed-files')!.evidence as { exposed: { path: string }[] };
      assert.deepEqual(exposure.exposed.map((e) => e.path).sort(), ['/.env', '/.git/HEAD']);
      const cert = byId.get('certificate-expiry')!.evidence as { validTo: string; daysLeft: number };
      assert.ok(cert.daysLeft > 300 && !Number.isNaN(Date.parse(cert.validTo)));
      const hostname = byId.get('certificate-hostname')!.evidence as { subjectAltNames: string[] };
      assert.deepEqual(hostname.subjectAltNames, [`DNS:${exposed.hostname}`]);
      assert.equal((byId.get('tls-protocol')!.evidence as { negotiated: string }).negotiated, 'TLSv1.3');
      assert.equal((byId.get('https-redirect')!.evidence as { status: number }).status, 301);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
    });

    test('security.scan admission: a target that is not a verified domain of the workspace is refused with 400 DOMAIN_NOT_VERIFIED, before anything is reserved or requested', async () => {
      const site = bySpec.get('good.scan.localhost')!;
      const tenant = await seedTenant(ctx.deps, { credits: 1_000_000 });
      site.reset();
      assertError(await run(ctx, tenant, 'security.scan', { url: site.url() }), 400, 'DOMAIN_NOT_VERIFIED');
      // A verified parent domain does not cover the host either.
      await verifyHostname(ctx, tenant.workspace.id, 'scan.localhost');
      assertError(await run(ctx, tenant, 'security.scan', { url: site.url() }), 400, 'DOMAIN_NOT_VERIFIED');
      assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
      assert.equal(site.requests.length + site.handshakes, 0);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
    });

    test('security.scan run time: a domain whose verification is withdrawn after admission fails the job DOMAIN_NOT_VERIFIED, charging nothing and requesting nothing', async () => {
      const site = bySpec.get('good.scan.localhost')!;
      const tenant = await tenantFor(ctx, site.hostname);
      const jobId = await startScan(ctx, tenant, site.url());
      const removed = await admin(ctx, `/admin/v1/workspaces/${tenant.workspace.id}/domains/${site.hostname}/remove`, {});
      assert.equal(removed.statusCode, 200, removed.body);
      site.reset();
      await drain(ctx);
      const job = await getJob(ctx, tenant, jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'DOMAIN_NOT_VERIFIED');
      assert.equal(job.costMillicents, 0);
      assert.equal(site.requests.length + site.handshakes, 0);
      assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
    });

    test('security.scan retry: a site that goes down mid-scan fails the job SCAN_TARGET_UNREACHABLE charging the completed checks; the retry resumes after them and the scan costs its price once', async () => {
      const tenant = await tenantFor(ctx, flaky.hostname);
      flaky.reset();
      flaky.dropPage = true;
      const jobId = await startScan(ctx, tenant, flaky.url());
      await drain(ctx);
      const failed = await getJob(ctx, tenant, jobId);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.errorCode, 'SCAN_TARGET_UNREACHABLE');
      // The TLS checks and https-redirect completed before the page was needed.
      const done = SECURITY_CHECKS.indexOf('hsts');
      assert.equal(failed.costMillicents, Math.ceil((PRICE * done) / SECURITY_CHECKS.length));
      assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);

      flaky.reset();
      const retry = await call(ctx, 'POST', `/v1/jobs/${jobId}/retry`, { secret: tenant.secret, workspaceId: tenant.workspace.id, headers: { 'idempotency-key': `retry-${jobId}` } });
      assert.equal(retry.statusCode, 202, retry.body);
      await drain(ctx);
      const job = await getJob(ctx, tenant, jobId);
      assert.equal(job.status, 'completed', JSON.stringify(job));
      assert.equal(job.costMillicents, PRICE, 'the completed checks were not charged again');
      const result = await resultOf(ctx, tenant, jobId);
      assert.deepEqual(verdictsOf(result.checks), ALL_PASS);
      // The second attempt made no handshake probe and no plain-HTTP request: those checks were kept.
      assert.equal(flaky.probes, 0);
      assert.deepEqual(flaky.requests.filter((r) => r.scheme === 'http'), []);
      assertBounded(flaky);
      assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
    });

    test('security.scan unreachable target: nothing listening fails the job SCAN_TARGET_UNREACHABLE with nothing charged and the hold released', async () => {
      const port = await refusingPort(SCAN_ADDRESS);
      const hostname = 'down.scan.localhost';
      const tenant = await tenantFor(ctx, hostname);
      const jobId = await startScan(ctx, tenant, `https://${hostname}:${port}/`);
      await drain(ctx);
      const job = await getJob(ctx, tenant, jobId);
      assert.equal(job.status, 'failed', JSON.stringify(job.status === 'completed' ? await resultOf(ctx, tenant, jobId) : job));
      assert.equal(job.errorCode, 'SCAN_TARGET_UNREACHABLE');
      assert.equal(job.costMillicents, 0);
      assert.equal((await balance(ctx, tenant)).reservedMillicents, 0);
      await assertLedgerInvariants(ctx.deps, tenant.workspace.id);
    });

    test('security.scan slow target: a page that never answers ends at the route’s deadline with SCAN_TARGET_TIMEOUT and the hold settled', async () => {
      const tenant = await tenantFor(shortCtx, slow.hostname);
      slow.reset();
      slow.holdPage = true;
      const res = await run(shortCtx, tenant, 'security.scan', { url: slow.url() });
      assert.equal(res.statusCode, 202, res.body);
      const jobId = res.json().data.jobId as string;
      await drain(shortCtx);
      const job = await getJob(shortCtx, tenant, jobId);
      assert.equal(job.status, 'failed');
      assert.equal(job.errorCode, 'SCAN_TARGET_TIMEOUT');
      assert.ok(job.costMillicents < PRICE);
      assert.equal((await balance(shortCtx, tenant)).reservedMillicents, 0);
      slow.holdPage = false;
      await assertLedgerInvariants(shortCtx.deps, tenant.workspace.id);
    });
  });
}

describe('egress TLS probe', () => {
  test('egress TLS probe: reports the negotiated protocol and the certificate as presented, with how it is judged', async () => {
    const egress = createEgress({ allowCidrs: [`${SCAN_ADDRESS}/32`] });
    try {
      const good = bySpec.get('good.scan.localhost')!;
      const probe = await egress.tlsProbe({ host: good.hostname, port: good.port });
      assert.equal(probe.handshake, 'completed');
      if (probe.handshake !== 'completed') return;
      assert.equal(probe.protocol, 'TLSv1.3');
      assert.equal(probe.address, SCAN_ADDRESS);
      assert.equal(probe.authorized, true);
      assert.equal(probe.hostnameError, null);
      assert.match(probe.certificate.subject, /CN=good\.scan\.localhost/);
      assert.match(probe.certificate.issuer, /CN=localhost/);
      assert.deepEqual(probe.certificate.subjectAltNames, ['DNS:good.scan.localhost']);
      assert.equal(probe.certificate.selfSigned, false);

      const expired = bySpec.get('expired.scan.localhost')!;
      const late = await egress.tlsProbe({ host: expired.hostname, port: expired.port });
      assert.ok(late.handshake === 'completed' && !late.authorized && late.authorizationError === 'CERT_HAS_EXPIRED');
      const self = bySpec.get('self-signed.scan.localhost')!;
      const own = await egress.tlsProbe({ host: self.hostname, port: self.port });
      assert.ok(own.handshake === 'completed' && own.certificate.selfSigned && own.authorizationError === 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const mismatch = bySpec.get('mismatch.scan.localhost')!;
      const other = await egress.tlsProbe({ host: mismatch.hostname, port: mismatch.port });
      assert.ok(other.handshake === 'completed' && other.hostnameError !== null && other.authorizationError === 'ERR_TLS_CERT_ALTNAME_INVALID');

      // Only TLS 1.0 and 1.1 offered: a modern server refuses, a legacy one completes.
      const refused = await egress.tlsProbe({ host: good.hostname, port: good.port, protocols: 'legacy' });
      assert.equal(refused.handshake, 'refused');
      const legacy = bySpec.get('legacy.scan.localhost')!;
      const old = await egress.tlsProbe({ host: legacy.hostname, port: legacy.port, protocols: 'legacy' });
      assert.ok(old.handshake === 'completed' && old.protocol === 'TLSv1.1');
    } finally {
      await egress.close();
    }
  });

  test('egress TLS probe: a refused address is never connected to, whether named by IP or by a name that resolves to it (the pinned lookup)', async () => {
    const egress = createEgress({ allowCidrs: [] });
    const good = bySpec.get('good.scan.localhost')!;
    try {
      good.reset();
      for (const host of [SCAN_ADDRESS, good.hostname]) {
        await assert.rejects(egress.tlsProbe({ host, port: good.port }), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_BLOCKED');
      }
      await assert.rejects(egress.tlsProbe({ host: 'not a host', port: good.port }), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_BAD_URL');
      assert.equal(good.handshakes, 0);
    } finally {
      await egress.close();
    }
  });

  test('egress TLS probe: nothing listening is EGRESS_NETWORK, and a server that never finishes the handshake hits the deadline (EGRESS_TIMEOUT)', async () => {
    const egress = createEgress({ allowCidrs: ['127.0.0.1/32'] });
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = await refusingPort('127.0.0.1');
      await assert.rejects(egress.tlsProbe({ host: '127.0.0.1', port }), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_NETWORK');
      const silentPort = (silent.address() as net.AddressInfo).port;
      await assert.rejects(egress.tlsProbe({ host: '127.0.0.1', port: silentPort, timeoutMs: 200 }), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_TIMEOUT');
    } finally {
      silent.close();
      await egress.close();
    }
  });

  test('egress requests verify certificates unless acceptAnyTls is set, which changes nothing of the address policy', async () => {
    const expired = bySpec.get('expired.scan.localhost')!;
    const egress = createEgress({ allowCidrs: [`${SCAN_ADDRESS}/32`] });
    const strict = createEgress({ allowCidrs: [] });
    try {
      await assert.rejects(egress.request(expired.url()), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_NETWORK');
      const res = await egress.request(expired.url(), { acceptAnyTls: true });
      assert.equal(res.status, 200);
      // A verified request after an unverified one does not reuse its connection.
      await assert.rejects(egress.request(expired.url()), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_NETWORK');
      await assert.rejects(strict.request(expired.url(), { acceptAnyTls: true }), (err: unknown) => err instanceof EgressError && err.code === 'EGRESS_BLOCKED');
    } finally {
      await egress.close();
      await strict.close();
    }
  });
});
