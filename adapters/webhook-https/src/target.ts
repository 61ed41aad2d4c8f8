import { isIP } from 'node:net';

export type ParsedTarget =
  | {
      readonly ok: true;
      /** Host name (lower case, punycode) or IP address as the WHATWG URL parser normalised it, without brackets. */
      readonly host: string;
      /** The port to connect to: the URL's, or 443. */
      readonly port: number;
      /** Path and query; the fragment is never sent. */
      readonly path: string;
      /** Whether `host` is an IP address (then no resolution happens). */
      readonly literal: boolean;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Reads a webhook URL with the WHATWG parser, which normalises every IPv4 spelling (`2130706433`,
 * `0x7f.1`, `0177.0.0.1`, `127.1`) to dotted decimal and IPv6 to its compressed form, so that the address
 * rules see the address a connection would reach. Refuses anything but `https:` and any credentials.
 */
export const parseTarget = (url: string): ParsedTarget => {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, reason: 'not a valid URL' };
  }
  if (u.protocol !== 'https:') return { ok: false, reason: `only https URLs are allowed, not ${u.protocol}` };
  if (u.username !== '' || u.password !== '') return { ok: false, reason: 'credentials in the URL are not allowed' };
  const host = u.hostname.startsWith('[') && u.hostname.endsWith(']') ? u.hostname.slice(1, -1) : u.hostname;
  if (host === '') return { ok: false, reason: 'the URL has no host' };
  if (u.port === '0') return { ok: false, reason: 'port 0 is not a port a receiver can listen on' };
  return { ok: true, host, port: u.port === '' ? 443 : Number(u.port), path: `${u.pathname}${u.search}`, literal: isIP(host) !== 0 };
};
