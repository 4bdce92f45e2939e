/**
 * Verified hostnames of a workspace (decisions.md section 4). A hostname is verified in at most
 * one workspace at a time: verifying it elsewhere moves it, and the old workspace's webhooks stop
 * being authorized. Verification by DNS TXT record, by an HTTPS file, or by the operator's word.
 */
import { publicWorkspaceId } from '../../lib/livemode.js';
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { randomToken, safeEqual } from '../../lib/crypto.js';
import { findWorkspace } from '../accounts/store.js';
import * as store from './store.js';
import type { Domain } from './store.js';

export type VerificationMethod = 'dns' | 'http' | 'operator';

const ASCII_OUTSIDE_HOSTNAMES = /[\x00-\x2c\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/;

/**
 * Lower-case ASCII (punycode) hostname without a trailing dot, or a 400. IP literals (also the
 * shorthand forms such as `127.1` or `0x7f.1`, which the URL host parser turns into dotted quads),
 * single labels and characters outside letters, digits and hyphens are refused.
 */
export function normaliseHostname(input: string): string {
  const trimmed = input.trim();
  // ASCII other than letters, digits, '-' and '.' is refused before the URL host parser would
  // percent-decode or otherwise reinterpret it ('exa%41mple.com', 'a:b', 'a/b').
  // domainToASCII then lower-cases, maps IDN labels to punycode and gives '' for what it cannot parse.
  const ascii = ASCII_OUTSIDE_HOSTNAMES.test(trimmed) ? '' : domainToASCII(trimmed).replace(/\.$/, '');
  const labels = ascii.split('.');
  const valid =
    ascii.length > 0 &&
    ascii.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) &&
    isIP(ascii) === 0;
  if (!valid) throw new AppError('INVALID_REQUEST', { message: 'hostname must be a DNS name such as hooks.example.com.' });
  return ascii;
}

/** Adds a pending hostname to the workspace; adding one it already has returns that row unchanged. */
export async function addDomain(deps: Deps, workspaceId: string, hostnameInput: string): Promise<Domain> {
  const hostname = normaliseHostname(hostnameInput);
  return deps.db.transaction().execute(async (trx) => {
    if (!(await findWorkspace(trx, workspaceId))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    const domain: Domain = {
      workspaceId,
      hostname,
      status: 'pending',
      verificationToken: `service-verify=${randomToken(24)}`,
      verifiedMethod: null,
      verifiedAt: null,
      createdAt: deps.clock.now(),
    };
    // Conflict-safe: a concurrent add of the same hostname leaves one row, which both return.
    if (await store.insertDomain(trx, domain)) return domain;
    return (await store.findDomain(trx, workspaceId, hostname))!;
  });
}

async function proofFound(deps: Deps, domain: Domain, method: VerificationMethod): Promise<boolean> {
  if (method === 'operator') return true;
  if (method === 'dns') {
    try {
      const records = await deps.net.resolveTxt(`_service-verify.${domain.hostname}`);
      return records.some((chunks) => safeEqual(chunks.join(''), domain.verificationToken));
    } catch {
      return false;
    }
  }
  try {
    const res = await deps.egress.request(`https://${domain.hostname}/.well-known/service-verify.txt`, {
      maxBytes: 4096,
      maxRedirects: 0,
      timeoutMs: 10_000,
    });
    return res.status === 200 && safeEqual(res.body.toString('utf8').trim(), domain.verificationToken);
  } catch {
    return false;
  }
}

export async function verifyDomain(deps: Deps, workspaceId: string, hostnameInput: string, method: VerificationMethod): Promise<Domain> {
  const hostname = normaliseHostname(hostnameInput);
  const domain = await store.findDomain(deps.db, workspaceId, hostname);
  if (!domain) throw new AppError('NOT_FOUND', { message: 'No such domain in this workspace.' });
  // The proof is looked for outside any transaction: it may take seconds.
  if (!(await proofFound(deps, domain, method))) {
    throw new AppError('DOMAIN_NOT_VERIFIED', {
      message:
        method === 'dns'
          ? `No TXT record _service-verify.${hostname} holding the verification token was found.`
          : `https://${hostname}/.well-known/service-verify.txt did not hold the verification token.`,
    });
  }
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    // Every workspace's row of this hostname is locked (in one order), so two workspaces verifying
    // it at once take turns instead of colliding on the one-verified-hostname index.
    const rows = await store.lockHostnameRows(trx, deps.caps, hostname);
    if (!rows.some((r) => r.workspaceId === workspaceId)) throw new AppError('NOT_FOUND', { message: 'No such domain in this workspace.' });
    await store.unverifyElsewhere(trx, hostname, workspaceId);
    await store.setDomainVerified(trx, workspaceId, hostname, method, now);
    return (await store.findDomain(trx, workspaceId, hostname))!;
  });
}

export async function removeDomain(deps: Deps, workspaceId: string, hostnameInput: string): Promise<void> {
  const hostname = normaliseHostname(hostnameInput);
  if (!(await store.deleteDomain(deps.db, workspaceId, hostname))) throw new AppError('NOT_FOUND', { message: 'No such domain in this workspace.' });
}

/**
 * True when `hostname` is verified in exactly this workspace right now (webhook authorization); a
 * test twin has its live workspace's domains (lib/livemode.ts).
 */
export async function isHostnameVerifiedFor(deps: Deps, workspaceId: string, hostname: string): Promise<boolean> {
  let normalised: string;
  try {
    normalised = normaliseHostname(hostname);
  } catch {
    return false; // not a DNS name (an IP literal, a single label …): never verified
  }
  // Exact match only: a verified parent domain does not cover its subdomains.
  const verified = await store.findVerifiedDomain(deps.db, normalised);
  return verified?.workspaceId === publicWorkspaceId(workspaceId);
}
