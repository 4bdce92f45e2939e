/**
 * The response-header checks of a scan (HSTS, CSP, X-Content-Type-Options, frame protection,
 * Referrer-Policy), each judged on the one answer of the target page.
 *
 * Severity follows what a missing or weak header exposes: `fail` where an attack works without
 * it (SSL stripping without HSTS, framing without frame protection, script injection without
 * CSP) or where a value leaks or disables protection; `warn` for hardening that is advised but
 * not decisive, and for protections present in a weak form.
 */
import { clip, firstValue, headerValue, type Check, type CheckOutcome, type ScannedPage } from './scan-session.js';

/** Half a year: the least max-age that keeps HSTS in force between two visits (and what preload lists ask for is a year). */
export const HSTS_MIN_SECONDS = 15_552_000;

function pageEvidence(page: ScannedPage): Record<string, unknown> {
  return { url: page.url, status: page.status };
}

export const hsts: Check = async (session) => {
  const page = await session.targetPage();
  const value = firstValue(page.headers['strict-transport-security']);
  const remedy = `Send Strict-Transport-Security: max-age=31536000; includeSubDomains on every https answer.`;
  if (value === undefined) {
    return { status: 'fail', summary: 'No Strict-Transport-Security header: a first plain-HTTP visit can be intercepted (SSL stripping).', evidence: pageEvidence(page), remedy };
  }
  const directives = value.split(';').map((d) => d.trim().toLowerCase());
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  const evidence = { ...pageEvidence(page), header: clip(value), maxAgeSeconds: maxAge === undefined ? null : Number(maxAge), includeSubDomains: directives.includes('includesubdomains'), preload: directives.includes('preload') };
  if (maxAge === undefined) return { status: 'fail', summary: 'The Strict-Transport-Security header has no valid max-age: browsers ignore it.', evidence, remedy };
  if (Number(maxAge) === 0) return { status: 'fail', summary: 'Strict-Transport-Security has max-age=0, which switches HSTS off.', evidence, remedy };
  if (Number(maxAge) < HSTS_MIN_SECONDS) {
    return { status: 'warn', summary: `Strict-Transport-Security max-age is ${maxAge} s, under half a year.`, evidence, remedy };
  }
  return { status: 'pass', summary: `Strict-Transport-Security is set (max-age ${maxAge} s).`, evidence };
};

/** The directives of each policy of a CSP header (several policies are separated by commas; all apply). */
function parsePolicies(value: string): Map<string, string[]>[] {
  return value.split(',').map((policy) => {
    const directives = new Map<string, string[]>();
    for (const part of policy.split(';')) {
      const [name, ...sources] = part.trim().split(/\s+/);
      // The first occurrence of a directive wins (CSP 3, 2.2.1).
      if (name && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources.map((s) => s.toLowerCase()));
    }
    return directives;
  });
}

/** What makes a policy's script sources weak; empty when scripts are well restricted. */
function scriptWeaknesses(policy: Map<string, string[]>): string[] {
  const sources = policy.get('script-src') ?? policy.get('default-src');
  if (!sources) return ['no script-src or default-src: scripts are not restricted'];
  const weaknesses: string[] = [];
  const nonceOrHash = sources.some((s) => /^'(nonce|sha256|sha384|sha512)-/.test(s));
  const strictDynamic = sources.includes("'strict-dynamic'");
  if (sources.includes("'unsafe-inline'") && !nonceOrHash && !strictDynamic) weaknesses.push("'unsafe-inline' lets injected inline scripts run");
  if (sources.includes("'unsafe-eval'")) weaknesses.push("'unsafe-eval' lets strings run as code");
  const open = sources.filter((s) => s === '*' || s === 'http:' || s === 'https:' || s === 'data:');
  if (open.length > 0 && !strictDynamic) weaknesses.push(`${open.join(' ')} allows scripts from any host`);
  return weaknesses;
}

export const contentSecurityPolicy: Check = async (session) => {
  const page = await session.targetPage();
  const value = headerValue(page.headers, 'content-security-policy');
  const reportOnly = headerValue(page.headers, 'content-security-policy-report-only');
  const remedy = "Send a Content-Security-Policy that restricts scripts, e.g. default-src 'self'; script-src 'self' (with nonces for inline scripts); object-src 'none'; base-uri 'none'.";
  if (value === undefined) {
    if (reportOnly !== undefined) {
      return { status: 'warn', summary: 'The Content-Security-Policy is only reported, not enforced.', evidence: { ...pageEvidence(page), reportOnly: clip(reportOnly) }, remedy: 'Once its reports are clean, send the policy as Content-Security-Policy.' };
    }
    return { status: 'fail', summary: 'No Content-Security-Policy header: injected scripts run unhindered.', evidence: pageEvidence(page), remedy };
  }
  // Every policy applies, so scripts are as restricted as the strictest policy makes them.
  const judged = parsePolicies(value).map(scriptWeaknesses);
  const best = judged.reduce((a, b) => (b.length < a.length ? b : a));
  const evidence = { ...pageEvidence(page), header: clip(value, 1000), weaknesses: best };
  if (best.length > 0) return { status: 'warn', summary: `The Content-Security-Policy is weak: ${best.join('; ')}.`, evidence, remedy };
  return { status: 'pass', summary: 'A Content-Security-Policy restricts where scripts come from.', evidence };
};

export const contentTypeOptions: Check = async (session) => {
  const page = await session.targetPage();
  const value = firstValue(page.headers['x-content-type-options']);
  const evidence = { ...pageEvidence(page), header: value === undefined ? null : clip(value) };
  if (value?.trim().toLowerCase() === 'nosniff') return { status: 'pass', summary: 'X-Content-Type-Options is nosniff.', evidence };
  return {
    status: 'warn',
    summary: value === undefined ? 'No X-Content-Type-Options header: browsers may guess content types.' : `X-Content-Type-Options is "${clip(value, 60)}", not nosniff.`,
    evidence,
    remedy: 'Send X-Content-Type-Options: nosniff on every answer.',
  };
};

export const frameProtection: Check = async (session) => {
  const page = await session.targetPage();
  const csp = headerValue(page.headers, 'content-security-policy');
  const xfo = firstValue(page.headers['x-frame-options']);
  const evidence = { ...pageEvidence(page), frameAncestors: null as string | null, xFrameOptions: xfo === undefined ? null : clip(xfo) };
  const remedy = "Send Content-Security-Policy: frame-ancestors 'none' (or 'self'), and X-Frame-Options: DENY for older browsers.";
  const ancestors = csp === undefined ? [] : parsePolicies(csp).flatMap((p) => (p.has('frame-ancestors') ? [p.get('frame-ancestors')!] : []));
  if (ancestors.length > 0) {
    evidence.frameAncestors = ancestors.map((a) => a.join(' ')).join(', ');
    // Several policies: a frame must satisfy each, so one narrow list suffices.
    const narrow = ancestors.some((a) => !a.some((s) => s === '*' || s === 'https:' || s === 'http:'));
    if (narrow) return { status: 'pass', summary: `frame-ancestors limits who may frame the page (${evidence.frameAncestors}).`, evidence };
    return { status: 'warn', summary: 'frame-ancestors allows any site to frame the page.', evidence, remedy };
  }
  const mode = xfo?.trim().toLowerCase();
  if (mode === 'deny' || mode === 'sameorigin') return { status: 'pass', summary: `X-Frame-Options is ${xfo!.trim()}.`, evidence };
  if (mode?.startsWith('allow-from')) return { status: 'warn', summary: 'X-Frame-Options ALLOW-FROM is ignored by current browsers.', evidence, remedy };
  return {
    status: 'fail',
    summary: xfo === undefined ? 'Nothing stops other sites from framing the page (clickjacking).' : `X-Frame-Options "${clip(xfo, 60)}" is not a value browsers honour.`,
    evidence,
    remedy,
  };
};

const REFERRER_POLICIES = new Set([
  'no-referrer',
  'no-referrer-when-downgrade',
  'origin',
  'origin-when-cross-origin',
  'same-origin',
  'strict-origin',
  'strict-origin-when-cross-origin',
  'unsafe-url',
]);

export const referrerPolicy: Check = async (session): Promise<CheckOutcome> => {
  const page = await session.targetPage();
  const value = headerValue(page.headers, 'referrer-policy');
  // Browsers take the last value they understand (Referrer Policy, 8.1).
  const policy = value
    ?.split(',')
    .map((v) => v.trim().toLowerCase())
    .filter((v) => REFERRER_POLICIES.has(v))
    .at(-1);
  const evidence = { ...pageEvidence(page), header: value === undefined ? null : clip(value), policy: policy ?? null };
  const remedy = 'Send Referrer-Policy: strict-origin-when-cross-origin (or no-referrer).';
  if (policy === undefined) {
    return { status: 'warn', summary: value === undefined ? 'No Referrer-Policy header: what leaks depends on each browser’s default.' : 'The Referrer-Policy header holds no value browsers understand.', evidence, remedy };
  }
  if (policy === 'unsafe-url') return { status: 'fail', summary: 'Referrer-Policy unsafe-url sends full addresses (paths, query strings) to every site, even over plain HTTP.', evidence, remedy };
  if (policy === 'no-referrer-when-downgrade') return { status: 'warn', summary: 'Referrer-Policy no-referrer-when-downgrade sends full addresses to other sites.', evidence, remedy };
  return { status: 'pass', summary: `Referrer-Policy is ${policy}.`, evidence };
};
