/**
 * Verified hostnames of a workspace (decisions.md section 4). A hostname is verified in at most
 * one workspace at a time: verifying it elsewhere moves it, and the old workspace's webhooks stop
 * being authorized. Verification by DNS TXT record, by an HTTPS file, or by the operator's word.
 */
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { randomToken, safeEqual } from '../../lib/crypto.js';
import { findWorkspace } from '../accounts/store.js';
import * as store from './store.js';
import type { Domain } from './store.js';

export type VerificationMethod = 'dns' | 'http' | 'operator';

/** Lower-case ASCII (punycode) hostname without a trailing dot, or a 400. IP literals are refused. */
export function normaliseHostname(input: string): string {
  const ascii = domainToASCII(input.trim().replace(/\.$/, '').toLowerCase());
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

export async function addDomain(deps: Deps, workspaceId: string, hostnameInput: string): Promise<Domain> {
  const hostname = normaliseHostname(hostnameInput);
  return deps.db.transaction().execute(async (trx) => {
    if (!(await findWorkspace(trx, workspaceId))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    const existing = await store.findDomain(trx, workspaceId, hostname);
    if (existing) return existing;
    const domain: Domain = {
      workspaceId,
      hostname,
      status: 'pending',
      verificationToken: `service-verify=${randomToken(24)}`,
      verifiedMethod: null,
      verifiedAt: null,
      createdAt: deps.clock.now(),
    };
    await store.insertDomain(trx, domain);
    return domain;
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
  if (!(await proofFound(deps, domain, method))) {
    throw new AppError('DOMAIN_NOT_VERIFIED', {
      message:
        method === 'dns'
          ? `No TXT record _service-verify.${hostname} holding the verification token was found.`
          : `https://${hostname}/.well-known/service-verify.txt did not hold the verification token.`,
    });
  }
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await store.unverifyElsewhere(trx, hostname, workspaceId);
    await store.setDomainVerified(trx, workspaceId, hostname, method, now);
  });
  return { ...domain, status: 'verified', verifiedMethod: method, verifiedAt: now };
}

export async function removeDomain(deps: Deps, workspaceId: string, hostnameInput: string): Promise<void> {
  const hostname = normaliseHostname(hostnameInput);
  if (!(await store.deleteDomain(deps.db, workspaceId, hostname))) throw new AppError('NOT_FOUND', { message: 'No such domain in this workspace.' });
}

/** True when `hostname` is verified in exactly this workspace right now (webhook authorization). */
export async function isHostnameVerifiedFor(deps: Deps, workspaceId: string, hostname: string): Promise<boolean> {
  const verified = await store.findVerifiedDomain(deps.db, hostname.toLowerCase());
  return verified?.workspaceId === workspaceId;
}
