/** Client address checks against a key's CIDR list (IPv4 and IPv6; IPv4-mapped IPv6 normalised). */
import ipaddr from 'ipaddr.js';

export function isValidRange(range: string): boolean {
  return range.includes('/') ? ipaddr.isValidCIDR(range) : ipaddr.isValid(range);
}

function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed;
}

export function parseRange(range: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  if (range.includes('/')) {
    const [addr, bits] = ipaddr.parseCIDR(range);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [addr, bits];
  }
  const addr = normalise(range)!;
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** True when `address` falls in any of `ranges`; an empty list allows every address. */
export function addressAllowed(address: string, ranges: readonly string[]): boolean {
  if (ranges.length === 0) return true;
  const ip = normalise(address);
  if (!ip) return false;
  return ranges.some((range) => {
    const [net, bits] = parseRange(range);
    return net.kind() === ip.kind() && ip.match(net, bits);
  });
}
