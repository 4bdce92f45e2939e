/**
 * Is a URL an acceptable webhook destination for a workspace (spec Rule 9)?
 *
 * In this order, each refusal with a `reason`: at most 2048 characters (TOO_LONG), an absolute
 * URL (INVALID_URL), https (NOT_HTTPS), no userinfo (USERINFO_NOT_ALLOWED), no fragment
 * (FRAGMENT_NOT_ALLOWED); an IP-literal host must pass the egress address policy
 * (ADDRESS_NOT_PERMITTED) and can never be a verified domain (DOMAIN_NOT_VERIFIED); a name must be
 * verified in exactly this workspace (DOMAIN_NOT_VERIFIED: a parent domain does not cover
 * subdomains, another workspace's verification does not count), and only then is it resolved:
 * no answer (UNRESOLVABLE) or any address outside the policy (ADDRESS_NOT_PERMITTED) refuses it.
 * Verification comes before resolution so that an unverified name is never looked up on a
 * client's behalf. Messages name only the caller's own URL: nothing about other workspaces.
 *
 * This is the check at save time; the delivery worker checks authorization again before each
 * send, and the egress client checks every address again inside the connection's own lookup.
 */
import { lookup } from 'node:dns/promises';
import type { Deps } from '../../deps.js';
import { compileAllowList, isIpAllowed, parseIpLiteral } from '../../egress/address-policy.js';
import { AppError } from '../../http/errors.js';
import { isHostnameVerifiedFor, normaliseHostname } from '../domains/service.js';

export const MAX_URL_LENGTH = 2048;
const RESOLVE_TIMEOUT_MS = 5_000;

export type DestinationRefusal =
  | 'TOO_LONG'
  | 'INVALID_URL'
  | 'NOT_HTTPS'
  | 'USERINFO_NOT_ALLOWED'
  | 'FRAGMENT_NOT_ALLOWED'
  | 'DOMAIN_NOT_VERIFIED'
  | 'ADDRESS_NOT_PERMITTED'
  | 'UNRESOLVABLE';

export type DestinationCheck =
  | { ok: true; /** The URL as it will be called (WHATWG-serialised). */ url: string; /** Lower-case ASCII hostname. */ hostname: string }
  | { ok: false; reason: DestinationRefusal; message: string };

function refuse(reason: DestinationRefusal, message: string): DestinationCheck {
  return { ok: false, reason, message };
}

async function resolveAddresses(deps: Deps, hostname: string): Promise<string[]> {
  const resolve = deps.net.lookupAddresses ?? (async (h: string) => (await lookup(h, { all: true, verbatim: true })).map((a) => a.address));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('lookup timed out')), RESOLVE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([resolve(hostname), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkDestination(deps: Deps, workspaceId: string, input: string): Promise<DestinationCheck> {
  if (input.length > MAX_URL_LENGTH) return refuse('TOO_LONG', `The URL must be at most ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return refuse('INVALID_URL', 'The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:') return refuse('NOT_HTTPS', 'Webhook URLs must use https.');
  if (url.username !== '' || url.password !== '') return refuse('USERINFO_NOT_ALLOWED', 'Webhook URLs must not contain a user name or password.');
  if (url.hash !== '' || input.includes('#')) return refuse('FRAGMENT_NOT_ALLOWED', 'Webhook URLs must not contain a fragment (#…).');

  const allow = compileAllowList(deps.config.egressAllowCidrs);
  const literal = parseIpLiteral(url.hostname);
  if (literal) {
    if (!isIpAllowed(literal, allow)) return refuse('ADDRESS_NOT_PERMITTED', `${url.hostname} is not a permitted destination address.`);
    return refuse('DOMAIN_NOT_VERIFIED', 'Webhook URLs need a hostname verified in this workspace; an IP address cannot be verified.');
  }
  const notVerified = refuse('DOMAIN_NOT_VERIFIED', `${url.hostname} is not a verified domain of this workspace (each hostname is verified exactly; a parent domain does not cover it).`);
  let hostname: string;
  try {
    hostname = normaliseHostname(url.hostname);
  } catch {
    return notVerified; // a single label such as `localhost`: never a verified domain
  }
  if (!(await isHostnameVerifiedFor(deps, workspaceId, hostname))) return notVerified;

  let addresses: string[];
  try {
    addresses = await resolveAddresses(deps, hostname);
  } catch {
    return refuse('UNRESOLVABLE', `${hostname} could not be resolved.`);
  }
  if (addresses.length === 0) return refuse('UNRESOLVABLE', `${hostname} has no address.`);
  for (const address of addresses) {
    const ip = parseIpLiteral(address);
    if (!ip || !isIpAllowed(ip, allow)) return refuse('ADDRESS_NOT_PERMITTED', `${hostname} resolves to an address that is not a permitted destination (private, loopback, link-local or reserved).`);
  }
  url.hostname = hostname; // the stored URL names exactly the verified hostname (no trailing dot)
  return { ok: true, url: url.href, hostname };
}

/** checkDestination for the API: a refusal is 400 WEBHOOK_URL_REJECTED with `details.reason`. */
export async function requireDestination(deps: Deps, workspaceId: string, input: string): Promise<{ url: string; hostname: string }> {
  const check = await checkDestination(deps, workspaceId, input);
  if (!check.ok) throw new AppError('WEBHOOK_URL_REJECTED', { message: check.message, details: { reason: check.reason } });
  return { url: check.url, hostname: check.hostname };
}
