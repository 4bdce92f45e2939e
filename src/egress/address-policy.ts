/**
 * Address policy for outbound connections (pure, no I/O).
 *
 * Invariant: an address is permitted only if (a) it lies inside an operator-supplied allow CIDR
 * (compared after unwrapping IPv4-mapped IPv6 to plain IPv4), or (b) it is a *public unicast*
 * address: for IPv4 outside every special-purpose block below, for IPv6 inside 2000::/3 and outside
 * every special-purpose block, where NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are judged
 * by the IPv4 address they embed. Anything that does not parse as a canonical IP literal is refused.
 * The function fails closed: when in doubt, the answer is `false`.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { parseRange } from '../lib/ip-ranges.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Ip = IPv4 | IPv6;
type Cidr = [Ip, number];

function cidr(text: string): Cidr {
  return ipaddr.parseCIDR(text);
}

/** IPv4 blocks that are never reachable by default (RFC 6890 and friends). */
const FORBIDDEN_V4: readonly Cidr[] = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8', // private
  '100.64.0.0/10', // CGNAT (also holds 100.100.100.200, Alibaba Cloud metadata)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (holds 169.254.169.254, cloud metadata)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.31.196.0/24', // AS112
  '192.52.193.0/24', // AMT
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '192.175.48.0/24', // AS112
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, includes 255.255.255.255 broadcast
].map(cidr);

/** Explicit metadata endpoints; all already fall in a forbidden block, listed so the intent is visible. */
const METADATA_ADDRESSES: readonly string[] = ['169.254.169.254', '100.100.100.200', 'fd00:ec2::254'];

/** IPv6 blocks that are never reachable by default, even though some sit inside 2000::/3. */
const FORBIDDEN_V6: readonly Cidr[] = [
  '2001::/23', // IETF protocol assignments (Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID, ...)
  '2001:db8::/32', // documentation
  '2620:4f:8000::/48', // AS112
  '3fff::/20', // documentation
  'fc00::/7', // unique-local (holds fd00:ec2::254, AWS metadata)
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
].map(cidr);

const GLOBAL_UNICAST_V6: Cidr = cidr('2000::/3');
const NAT64_WELL_KNOWN: Cidr = cidr('64:ff9b::/96');
const SIX_TO_FOUR: Cidr = cidr('2002::/16');

/**
 * Parses a canonical IP literal (as produced by DNS or by WHATWG URL host parsing).
 * Accepts `[v6]` brackets and a `%zone` suffix. Rejects the legacy inet_aton spellings
 * (`127.1`, `0x7f.0.0.1`, `2130706433`) on purpose: those must be normalised by URL parsing first.
 */
export function parseIpLiteral(text: string): Ip | null {
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const version = isIP(s);
  if (version === 0) return null;
  try {
    if (version === 4) return ipaddr.IPv4.parse(s);
    // ipaddr.js reads a dotted suffix as IPv4-*mapped* (`::8.8.8.8` becomes `::ffff:8.8.8.8`), which is
    // not the address the socket would use. Canonicalise through the WHATWG host parser first: it
    // serialises IPv6 as plain hex pieces, so what we classify is exactly what we connect to.
    const zone = s.indexOf('%');
    const bare = zone === -1 ? s : s.slice(0, zone);
    const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  } catch {
    return null;
  }
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes the IPv4 address; everything else is returned as is. */
export function unwrapMapped(ip: Ip): Ip {
  if (ip.kind() === 'ipv6' && (ip as IPv6).isIPv4MappedAddress()) return (ip as IPv6).toIPv4Address();
  return ip;
}

function inAny(ip: Ip, ranges: readonly Cidr[]): boolean {
  for (const range of ranges) {
    if (range[0].kind() === ip.kind() && ip.match(range)) return true;
  }
  return false;
}

function isPublicV4(ip: IPv4): boolean {
  if (inAny(ip, FORBIDDEN_V4)) return false;
  // Belt and braces: ipaddr.js' own classification must agree that this is plain unicast.
  return ip.range() === 'unicast';
}

function v4FromParts(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
}

function isPublicV6(ip: IPv6): boolean {
  if (ip.isIPv4MappedAddress()) return isPublicV4(ip.toIPv4Address());
  const p = ip.parts;
  if (ip.match(NAT64_WELL_KNOWN)) return isPublicV4(v4FromParts(p[6] ?? 0, p[7] ?? 0));
  if (ip.match(SIX_TO_FOUR)) return isPublicV4(v4FromParts(p[1] ?? 0, p[2] ?? 0));
  // IPv4-compatible (::a.b.c.d), ::, ::1, 64:ff9b:1::/48, 100::/64 ... are all outside 2000::/3.
  if (!ip.match(GLOBAL_UNICAST_V6)) return false;
  if (inAny(ip, FORBIDDEN_V6)) return false;
  return ip.range() === 'unicast';
}

/** Is `ip` one of the well-known cloud metadata endpoints (after unwrapping IPv4-mapped forms)? */
export function isMetadataAddress(ip: Ip): boolean {
  const plain = unwrapMapped(ip).toNormalizedString();
  return METADATA_ADDRESSES.some((m) => ipaddr.parse(m).toNormalizedString() === plain);
}

/** Default policy, no allow list: only public unicast addresses pass. */
export function isPublicUnicast(ip: Ip): boolean {
  const plain = unwrapMapped(ip);
  if (isMetadataAddress(plain)) return false;
  return plain.kind() === 'ipv4' ? isPublicV4(plain as IPv4) : isPublicV6(plain as IPv6);
}

/** A compiled allow list: CIDRs with IPv4-mapped IPv6 ranges rewritten to IPv4. */
export type AllowList = readonly Cidr[];

/**
 * Compiles allow entries ("10.0.0.0/8", "127.0.0.1", "::1", "::ffff:10.0.0.0/104").
 * Throws a TypeError on an entry that is not a valid IP or CIDR (configuration error, fail loudly).
 */
export function compileAllowList(entries: readonly string[]): AllowList {
  return entries.map((entry) => {
    // The parser of every range list (lib/ip-ranges.ts): canonical notation only.
    const range = parseRange(entry.trim());
    if (!range) throw new TypeError(`egress allowCidrs: not an IP address or CIDR range in canonical notation: ${JSON.stringify(entry)}`);
    return range;
  });
}

/** Policy over a parsed address and a compiled allow list. */
export function isIpAllowed(ip: Ip, allow: AllowList): boolean {
  const plain = unwrapMapped(ip);
  if (inAny(plain, allow)) return true;
  return isPublicUnicast(plain);
}

/**
 * The egress address policy. `address` is a canonical IP literal (brackets and zone ids tolerated);
 * `allowCidrs` entries are CIDRs or single IPs, v4 or v6. Unparsable addresses are refused;
 * invalid allow entries throw a TypeError.
 */
export function isAddressAllowed(address: string, allowCidrs: readonly string[]): boolean {
  const ip = parseIpLiteral(address);
  if (!ip) return false;
  return isIpAllowed(ip, compileAllowList(allowCidrs));
}
