import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;
type Address = IPv4 | IPv6;

export type AddressCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * `ESIG_WEBHOOK_ALLOW_HOSTS`, compiled: host names matched exactly (case-insensitive, a final dot
 * ignored) and address ranges. Development only — it switches the address rules off for what it names.
 */
export interface AllowList {
  readonly names: ReadonlySet<string>;
  readonly ranges: ReadonlyArray<readonly [Address, number]>;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/;

/** Lower case, without the final dot a fully qualified name may carry. */
export const normaliseHostName = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** An IPv4-mapped IPv6 address is its IPv4 address, for every rule and every allow entry. */
const unmap = (a: Address): Address => (a.kind() === 'ipv6' && (a as IPv6).isIPv4MappedAddress() ? (a as IPv6).toIPv4Address() : a);

/**
 * Reads allow entries: `127.0.0.1/32`, `::1/128`, a bare address, or a host name such as `localhost`.
 * Throws on an entry that is none of these (a configuration error, reported at start-up).
 */
export const compileAllowList = (entries: readonly string[]): AllowList => {
  const names = new Set<string>();
  const ranges: Array<readonly [Address, number]> = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (entry.includes('/')) {
      if (!ipaddr.isValidCIDR(entry) || isIP(entry.slice(0, entry.indexOf('/'))) === 0) throw new Error(`allowHosts: not a CIDR range: ${entry}`);
      const [addr, bits] = ipaddr.parseCIDR(entry);
      const mapped = addr.kind() === 'ipv6' && (addr as IPv6).isIPv4MappedAddress() && bits >= 96;
      ranges.push(mapped ? [(addr as IPv6).toIPv4Address(), bits - 96] : [addr, bits]);
    } else if (isIP(entry) !== 0) {
      const addr = unmap(ipaddr.parse(entry));
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else {
      const name = normaliseHostName(entry);
      if (!HOST_NAME.test(name)) throw new Error(`allowHosts: not a host name, address or CIDR range: ${entry}`);
      names.add(name);
    }
  }
  return { names, ranges };
};

const allowedAddress = (a: Address, allow: AllowList): boolean =>
  allow.ranges.some(([range, bits]) => range.kind() === a.kind() && a.match(range, bits));

const cidrs = <A extends Address>(list: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [A, number, string]> =>
  list.map(([cidr, label]) => {
    const [addr, bits] = ipaddr.parseCIDR(cidr);
    return [addr as A, bits, label] as const;
  });

/**
 * Every IPv4 range the service spec and its contract name, checked by hand in addition to ipaddr.js's
 * `range()`, so that a change of classification in a later ipaddr.js cannot open one of them. ipaddr.js
 * 2.x covers all of them today (as unspecified, private, carrierGradeNat, loopback, linkLocal,
 * reserved, multicast, broadcast); it also refuses as112 and amt, which we keep refusing.
 */
const V4_REFUSED = cidrs<IPv4>([
  ['0.0.0.0/8', '"this network" (0.0.0.0/8)'],
  ['10.0.0.0/8', 'private (10.0.0.0/8)'],
  ['100.64.0.0/10', 'carrier-grade NAT (100.64.0.0/10)'],
  ['127.0.0.0/8', 'loopback (127.0.0.0/8)'],
  ['169.254.0.0/16', 'link-local (169.254.0.0/16)'],
  ['172.16.0.0/12', 'private (172.16.0.0/12)'],
  ['192.0.0.0/24', 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0/24', 'documentation (192.0.2.0/24)'],
  ['192.88.99.0/24', '6to4 relay anycast (192.88.99.0/24)'],
  ['192.168.0.0/16', 'private (192.168.0.0/16)'],
  ['198.18.0.0/15', 'benchmarking (198.18.0.0/15)'],
  ['198.51.100.0/24', 'documentation (198.51.100.0/24)'],
  ['203.0.113.0/24', 'documentation (203.0.113.0/24)'],
  ['224.0.0.0/4', 'multicast (224.0.0.0/4)'],
  ['240.0.0.0/4', 'reserved (240.0.0.0/4, broadcast included)'],
]);

/**
 * IPv6 ranges checked by hand. ipaddr.js classifies most of them too; what it does not cover:
 * IPv4-compatible addresses `::a.b.c.d` (::/96, deprecated; ipaddr.js calls `::7f00:1` unicast), the
 * IPv4 inside 6to4 (2002::/16) and NAT64 (64:ff9b::/96) addresses (it names the ranges, it does not
 * look inside them — see `checkV6`), and space outside 2000::/3, the only global unicast allocation,
 * which it also calls unicast (4000::/3, say).
 */
const V6_REFUSED = cidrs<IPv6>([
  ['::/128', 'unspecified (::)'],
  ['::1/128', 'loopback (::1)'],
  ['::/96', 'IPv4-compatible (::/96)'],
  ['100::/64', 'discard-only (100::/64)'],
  ['2001::/32', 'Teredo (2001::/32)'],
  ['2001:db8::/32', 'documentation (2001:db8::/32)'],
  ['3fff::/20', 'documentation (3fff::/20)'],
  ['fc00::/7', 'unique local (fc00::/7)'],
  ['fe80::/10', 'link-local (fe80::/10)'],
  ['fec0::/10', 'site-local (fec0::/10)'],
  ['ff00::/8', 'multicast (ff00::/8)'],
]);

const [GLOBAL_UNICAST, GLOBAL_UNICAST_BITS] = ipaddr.parseCIDR('2000::/3') as [IPv6, number];
const [NAT64, NAT64_BITS] = ipaddr.parseCIDR('64:ff9b::/96') as [IPv6, number];

const refuse = (reason: string): AddressCheck => ({ ok: false, reason });
const OK: AddressCheck = { ok: true };

const checkV4 = (a: IPv4): AddressCheck => {
  for (const [range, bits, label] of V4_REFUSED) if (a.match(range, bits)) return refuse(label);
  const kind = a.range();
  return kind === 'unicast' ? OK : refuse(`${kind} (ipaddr.js)`);
};

const v4From = (hi: number, lo: number): IPv4 => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

const embedded = (how: string, inner: AddressCheck): AddressCheck => (inner.ok ? inner : refuse(`${how} of ${inner.reason}`));

const checkV6 = (a: IPv6): AddressCheck => {
  if (a.zoneId !== undefined) return refuse('scoped (zone id)');
  const p = a.parts as [number, number, number, number, number, number, number, number];
  // Addresses that carry an IPv4 address answer to the rules for that address.
  if (a.isIPv4MappedAddress()) return embedded('IPv4-mapped', checkV4(a.toIPv4Address()));
  if (a.match(NAT64, NAT64_BITS)) return embedded('NAT64', checkV4(v4From(p[6], p[7])));
  if (a.range() === '6to4') return embedded('6to4', checkV4(v4From(p[1], p[2])));
  for (const [range, bits, label] of V6_REFUSED) if (a.match(range, bits)) return refuse(label);
  const kind = a.range();
  if (kind !== 'unicast') return refuse(`${kind} (ipaddr.js)`);
  return a.match(GLOBAL_UNICAST, GLOBAL_UNICAST_BITS) ? OK : refuse('not global unicast (outside 2000::/3)');
};

/**
 * Whether a webhook may connect to `ip`: public unicast only, unless an allow entry covers it. `ip` must
 * be a plain address as `net.isIP` reads it (the form a connection would use); anything else is refused.
 * A refusal's reason names the range, e.g. `127.0.0.1 is loopback (127.0.0.0/8)`.
 */
export const checkAddressWith = (ip: string, allow: AllowList): AddressCheck => {
  if (isIP(ip) === 0) return refuse(`not an IP address: ${JSON.stringify(ip)}`);
  const addr = ipaddr.parse(ip);
  if (allowedAddress(unmap(addr), allow)) return OK;
  const verdict = addr.kind() === 'ipv4' ? checkV4(addr as IPv4) : checkV6(addr as IPv6);
  return verdict.ok ? verdict : refuse(`${ip} is ${verdict.reason}`);
};

/** `checkAddressWith` taking allow entries as `ESIG_WEBHOOK_ALLOW_HOSTS` lists them (host names are ignored here). */
export const checkAddress = (ip: string, allow: readonly string[] = []): AddressCheck => checkAddressWith(ip, compileAllowList(allow));
