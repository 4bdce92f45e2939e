/**
 * The one parser of IP ranges (an address or a CIDR, IPv4 and IPv6; IPv4-mapped IPv6 normalised to
 * IPv4), for every list an operator or owner writes: configuration (EGRESS_ALLOW_CIDRS,
 * TRUSTED_PROXIES), a key's IP ranges and the egress allow list. Also the client address check
 * against a key's ranges.
 *
 * Only canonical notations are accepted: IPv4 as four decimal parts without leading zeros, IPv6
 * as RFC 4291 text. ipaddr.js alone would also take `010.1.0.0` (octal: 8.1.0.0), `10.1` or
 * `167838211`, so an operator who typed a leading zero would silently get another network.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

function isCanonicalAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || ipaddr.IPv6.isValid(text);
}

/** Parses an address written canonically; IPv4-mapped IPv6 becomes the IPv4 address. */
function parseAddress(text: string): Address | undefined {
  if (typeof text !== 'string' || !isCanonicalAddress(text)) return undefined;
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed;
}

/** An address (`10.1.2.3`, `2001:db8::1`) or a CIDR range (`10.1.0.0/16`, `2001:db8::/32`). */
export function isValidRange(range: string): boolean {
  return parseRange(range) !== undefined;
}

export function parseRange(range: string): [Address, number] | undefined {
  if (typeof range !== 'string') return undefined;
  const slash = range.indexOf('/');
  if (slash < 0) {
    const addr = parseAddress(range);
    return addr && [addr, addr.kind() === 'ipv4' ? 32 : 128];
  }
  const text = range.slice(0, slash);
  const bitsText = range.slice(slash + 1);
  if (!isCanonicalAddress(text) || !/^(0|[1-9]\d{0,2})$/.test(bitsText)) return undefined;
  const addr = ipaddr.parse(text);
  const bits = Number(bitsText);
  if (bits > (addr.kind() === 'ipv4' ? 32 : 128)) return undefined;
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [addr, bits];
}

/** True when `address` falls in any of `ranges`; an empty list allows every address. */
export function addressAllowed(address: string | undefined, ranges: readonly string[]): boolean {
  if (ranges.length === 0) return true;
  const ip = address === undefined ? undefined : parseAddress(address);
  if (!ip) return false;
  return ranges.some((range) => {
    const parsed = parseRange(range);
    return parsed !== undefined && parsed[0].kind() === ip.kind() && ip.match(parsed[0], parsed[1]);
  });
}
