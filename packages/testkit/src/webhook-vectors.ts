/**
 * Known-answer vectors for esig webhook signatures, run by every verifier (`@esig/webhooks` on node:crypto,
 * `@esig/client` on WebCrypto), so the two implementations cannot disagree. Every MAC here was computed
 * independently with `openssl dgst -sha256 -hmac <secret>` over `<t>.<body>`.
 */
export interface WebhookVector {
  readonly name: string;
  /** The raw body: text, or bytes (not necessarily valid UTF-8) given as hex. */
  readonly body: string | { readonly hex: string };
  readonly header: string | undefined;
  readonly secrets: readonly string[];
  /** The receiver's clock, in seconds. */
  readonly nowS: number;
  readonly toleranceS: number;
  readonly expect: 'ok' | 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature';
}

export const bodyBytes = (v: WebhookVector): Uint8Array =>
  typeof v.body === 'string' ? new TextEncoder().encode(v.body) : Uint8Array.from(v.body.hex.match(/../g)!.map((h) => parseInt(h, 16)));

const T = 1795424880;
const BODY =
  '{"id":"evt_01JDQ4ZV8W3K5M7N9P2R4T6X01","type":"request.completed","created":"2026-11-23T09:08:00.000Z","test_mode":true,"data":{"request_id":"req_01JDQ4ZV8W3K5M7N9P2R4T6X01"}}';
const A = 'whsec_test_secret_A';
const B = 'whsec_test_secret_B';
const MAC_A = '92354da7603daeb57d885e50952338dadc9e9646c16b38878a38eb317eb5f0bb';
const MAC_B = '6e10c01cf71bb0df3def61589f81ba8fb710101900c10c384eb410f25c78906b';
/** Over the bytes 7b ff fe 7d, which are not UTF-8: a verifier that decodes and re-encodes them fails. */
const MAC_BYTES = '01d0647b6a5ce07c793c166a8455dda67387c00c198e7711e40febe91ed6acf8';
const UNICODE_SECRET = 'whsec_ünïcødé';
const UNICODE_BODY = '{"name":"Zoë ✍"}';
const MAC_UNICODE = '8f23cf93ca4eb858633ee73c7a44dc420befd0b9bfe58683b89f07dacec90625';

const ok = { nowS: T, toleranceS: 300, expect: 'ok' } as const;

export const WEBHOOK_VECTORS: readonly WebhookVector[] = [
  { name: 'one v1 over a text body', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [A], ...ok },
  { name: 'bytes that are not UTF-8, verified as received', body: { hex: '7bfffe7d' }, header: `t=${T},v1=${MAC_BYTES}`, secrets: [A], ...ok },
  { name: 'UTF-8 secret and body', body: UNICODE_BODY, header: `t=${T},v1=${MAC_UNICODE}`, secrets: [UNICODE_SECRET], ...ok },
  { name: 'two v1 during a rotation, the second one matching', body: BODY, header: `t=${T},v1=${MAC_B},v1=${MAC_A}`, secrets: [A], ...ok },
  { name: 'the receiver holds both secrets, the header the new one', body: BODY, header: `t=${T},v1=${MAC_B}`, secrets: [A, B], ...ok },
  { name: 'upper-case hex', body: BODY, header: `t=${T},v1=${MAC_A.toUpperCase()}`, secrets: [A], ...ok },
  { name: 'spaces, empty and unknown elements (a later v2) are ignored', body: BODY, header: ` t = ${T} ,, v2=abc, v1=${MAC_A} ,x`, secrets: [A], ...ok },
  { name: 'exactly at the tolerance, in the past', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [A], nowS: T + 300, toleranceS: 300, expect: 'ok' },
  { name: 'one second past the tolerance', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [A], nowS: T + 301, toleranceS: 300, expect: 'timestamp_out_of_tolerance' },
  { name: 'too far in the future', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [A], nowS: T - 301, toleranceS: 300, expect: 'timestamp_out_of_tolerance' },
  { name: 'a narrower tolerance', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [A], nowS: T + 11, toleranceS: 10, expect: 'timestamp_out_of_tolerance' },
  { name: 'no header', body: BODY, header: undefined, secrets: [A], ...ok, expect: 'missing_header' },
  { name: 'a blank header', body: BODY, header: '  ', secrets: [A], ...ok, expect: 'missing_header' },
  { name: 'no t', body: BODY, header: `v1=${MAC_A}`, secrets: [A], ...ok, expect: 'malformed_header' },
  { name: 't twice', body: BODY, header: `t=${T},t=${T},v1=${MAC_A}`, secrets: [A], ...ok, expect: 'malformed_header' },
  { name: 't not digits', body: BODY, header: `t=${T}.5,v1=${MAC_A}`, secrets: [A], ...ok, expect: 'malformed_header' },
  { name: 'no v1', body: BODY, header: `t=${T},v0=${MAC_A}`, secrets: [A], ...ok, expect: 'malformed_header' },
  { name: 'another secret', body: BODY, header: `t=${T},v1=${MAC_A}`, secrets: [B], ...ok, expect: 'no_matching_signature' },
  { name: 'the body re-serialized', body: JSON.stringify(JSON.parse(BODY), null, 1), header: `t=${T},v1=${MAC_A}`, secrets: [A], ...ok, expect: 'no_matching_signature' },
  { name: 'a MAC for another timestamp', body: BODY, header: `t=${T + 1},v1=${MAC_A}`, secrets: [A], nowS: T + 1, toleranceS: 300, expect: 'no_matching_signature' },
  { name: 'a truncated MAC', body: BODY, header: `t=${T},v1=${MAC_A.slice(0, 63)}`, secrets: [A], ...ok, expect: 'no_matching_signature' },
  {
    // U+0161 is 0x61 ('a') in its low byte: a comparison of Latin-1 bytes would take it for the real MAC.
    name: 'a non-ASCII look-alike of the MAC',
    body: BODY,
    header: `t=${T},v1=${MAC_A.replace('a', '\u0161')}`,
    secrets: [A],
    ...ok,
    expect: 'no_matching_signature',
  },
];
