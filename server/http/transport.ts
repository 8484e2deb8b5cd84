// Peer addresses and D7's transport rule: is this request as good as HTTPS (TLS, a loopback peer, or a trusted
// proxy that says the client used https)?

/** Turns uWS's address text (IPv6 in full 8-group form) into a usual form: IPv4-mapped as IPv4, IPv6 compressed. */
export function formatAddress(raw: string): string {
  if (!raw.includes(':')) return raw;
  const groups = parseIpv6(raw);
  if (groups === undefined) return raw;
  if (isMappedIpv4(groups)) {
    const hi = groups[6] as number;
    const lo = groups[7] as number;
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return compressIpv6(groups);
}

/** D7: 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104, in any textual form. */
export function isLoopbackAddress(address: string): boolean {
  if (!address.includes(':')) return address.startsWith('127.');
  const groups = parseIpv6(address);
  if (groups === undefined) return false;
  if (isMappedIpv4(groups)) return (groups[6] as number) >> 8 === 127;
  for (let i = 0; i < 7; i++) if (groups[i] !== 0) return false;
  return groups[7] === 1;
}

/**
 * D7 with one refinement: behind a trusted proxy, a present X-Forwarded-Proto decides even for a loopback peer.
 * D46: of a list (`https, http`, or repeated headers joined with ", "), the LAST value decides: it is the one the
 * nearest proxy (the trusted one) set; earlier values came from further away and could be forged by the client.
 */
export function isTransportSecure(
  tls: boolean,
  trustProxy: boolean,
  peer: Peer,
  forwardedProto: string | undefined,
): boolean {
  if (tls) return true;
  if (trustProxy && forwardedProto !== undefined && forwardedProto !== '') {
    const comma = forwardedProto.lastIndexOf(',');
    const last = (comma < 0 ? forwardedProto : forwardedProto.slice(comma + 1)).trim().toLowerCase();
    return last === 'https';
  }
  return peer.loopback;
}

function isMappedIpv4(groups: readonly number[]): boolean {
  return groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff;
}

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address. Accepts `::` and a dotted IPv4 tail. */
function parseIpv6(text: string): number[] | undefined {
  let body = text;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) > 0) {
    const quad = text.slice(lastColon + 1).split('.');
    if (quad.length !== 4 || quad.some((n) => !/^[0-9]{1,3}$/.test(n) || Number(n) > 255)) return undefined;
    const [a, b, c, d] = quad.map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    body = text.slice(0, lastColon + 1);
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (group.length === 0 || group.length > 4 || !/^[0-9a-fA-F]+$/.test(group)) return undefined;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const head = parse(halves[0] as string);
  const rest = halves.length === 2 ? parse(halves[1] as string) : [];
  if (head === undefined || rest === undefined) return undefined;
  const total = head.length + rest.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return undefined;
  const zeros = new Array<number>(8 - total).fill(0);
  return [...head, ...zeros, ...rest, ...tail];
}

/** RFC 5952 text: lower-case, no leading zeros, the longest run (2+) of zero groups as "::". */
function compressIpv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

export interface Peer {
  readonly address: string;
  readonly loopback: boolean;
}

let lastRaw = '';
let lastPeer: Peer = { address: '', loopback: false };

/** formatAddress + isLoopbackAddress, remembering the last peer (consecutive requests mostly share one). */
export function describePeer(raw: string): Peer {
  if (raw !== lastRaw) {
    const address = formatAddress(raw);
    lastPeer = { address, loopback: isLoopbackAddress(address) };
    lastRaw = raw;
  }
  return lastPeer;
}
