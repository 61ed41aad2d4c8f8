import fc from 'fast-check';

export const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));

/** An address inside `base/bits`, given the base's octets. */
const inV4 = (base: readonly [number, number, number, number], bits: number) =>
  fc.nat({ max: 2 ** (32 - bits) - 1 }).map((offset) => {
    const n = ((base[0] << 24) | (base[1] << 16) | (base[2] << 8) | base[3]) >>> 0;
    const v = (n + offset) >>> 0;
    return [v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff].join('.');
  });

/** Addresses from every IPv4 range that must be refused. */
export const nonPublicV4 = fc.oneof(
  inV4([0, 0, 0, 0], 8),
  inV4([10, 0, 0, 0], 8),
  inV4([100, 64, 0, 0], 10),
  inV4([127, 0, 0, 0], 8),
  inV4([169, 254, 0, 0], 16),
  inV4([172, 16, 0, 0], 12),
  inV4([192, 0, 0, 0], 24),
  inV4([192, 0, 2, 0], 24),
  inV4([192, 168, 0, 0], 16),
  inV4([198, 18, 0, 0], 15),
  inV4([198, 51, 100, 0], 24),
  inV4([203, 0, 113, 0], 24),
  inV4([224, 0, 0, 0], 4),
  inV4([240, 0, 0, 0], 4),
);

/** An IPv4 address as the two low 16-bit groups of an IPv6 address. */
export const v4Groups = (ip: string): string => {
  const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};
