import net from 'node:net';

/**
 * Which addresses an outbound call may reach. Everything a server could reach but the internet
 * could not is refused unless the operator allows it (OUTBOUND_ALLOW_PRIVATE): loopback, private
 * and shared ranges, link-local (cloud metadata services at 169.254.169.254 and fd00:ec2::254),
 * multicast, reserved, documentation ranges, and IPv6 forms that embed an IPv4 address
 * (mapped, NAT64, 6to4, Teredo), which would otherwise smuggle a private one past the IPv4 rules.
 */
const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
// IPv4-mapped addresses are unmapped and checked as IPv4 (the BlockList would match every IPv4 address against ::ffff:0:0/96).
const REFUSED_V6 = [
  '::/128',
  '::1/128',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/32',
  '2001:db8::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

function blockList(v4: string[], v6: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const cidr of v4) addCidr(list, cidr, 'ipv4');
  for (const cidr of v6) addCidr(list, cidr, 'ipv6');
  return list;
}

function addCidr(list: net.BlockList, cidr: string, type: 'ipv4' | 'ipv6'): void {
  const [address = '', prefix] = cidr.split('/');
  list.addSubnet(address, Number(prefix ?? (type === 'ipv4' ? 32 : 128)), type);
}

const REFUSED = blockList(REFUSED_V4, REFUSED_V6);

/** `::ffff:10.0.0.1` and `::ffff:a00:1` are the IPv4 address they carry, checked as such. */
function unmapped(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const family = net.isIP(address);
  if (family === 4) return { address, type: 'ipv4' };
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] !== undefined && net.isIPv4(dotted[1])) return { address: dotted[1], type: 'ipv4' };
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] !== undefined && hex[2] !== undefined) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, type: 'ipv4' };
  }
  return { address, type: 'ipv6' };
}

/** Whether `address` (an IP literal) is one the internet could not reach: see REFUSED_V4/V6. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) === 0) return true;
  const { address: a, type } = unmapped(bare);
  return REFUSED.check(a, type);
}

/**
 * What the operator allows despite the rule above (OUTBOUND_ALLOW_PRIVATE): address ranges
 * (`10.20.0.0/16`, `127.0.0.1`, `fd00::/8`) and host names (`idp.corp.internal`: whatever it
 * resolves to). Parsed once; an entry that is neither is a configuration error.
 */
export class AllowList {
  private readonly ranges = new net.BlockList();
  private readonly hosts = new Set<string>();
  readonly entries: readonly string[];

  constructor(entries: readonly string[] = []) {
    this.entries = entries;
    for (const entry of entries) {
      const problem = AllowList.problemOf(entry);
      if (problem !== null) throw new Error(problem);
      const [address = '', prefix] = entry.split('/');
      const family = net.isIP(address);
      if (family === 0) this.hosts.add(entry.toLowerCase());
      else addCidr(this.ranges, prefix === undefined ? address : entry, family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Why `entry` is not a range or a host name, or null when it is one. */
  static problemOf(entry: string): string | null {
    const [address = '', prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    if (family !== 0) {
      const max = family === 4 ? 32 : 128;
      if (extra === undefined && (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))) return null;
      return `"${entry}" is not an address range: write it as 10.0.0.0/8 or fd00::/8 (prefix at most ${max})`;
    }
    if (prefix === undefined && /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(entry))
      return null;
    return `"${entry}" is neither an address range (10.0.0.0/8) nor a host name (idp.corp.internal)`;
  }

  /** Whether `host` (the URL's host name) may reach `address` (one it resolved to, or itself when a literal). */
  allows(host: string, address: string): boolean {
    if (this.hosts.has(host.toLowerCase().replace(/\.$/, ''))) return true;
    const bare = address.replace(/^\[|\]$/g, '');
    if (net.isIP(bare) === 0) return false;
    const { address: a, type } = unmapped(bare);
    return this.ranges.check(a, type) || (type === 'ipv4' && this.ranges.check(`::ffff:${a}`, 'ipv6'));
  }
}

/** Whether a call to `host` may connect to `address`. */
export function mayConnect(allow: AllowList, host: string, address: string): boolean {
  return !isPrivateAddress(address) || allow.allows(host, address);
}
