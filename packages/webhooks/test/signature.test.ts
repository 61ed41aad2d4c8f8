import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOLERANCE_S, WebhookSignatureError, constructEvent, signatureHeader, verifySignature } from '../src/index.js';
import { byteBody, jsonObject, rawBody, secret, secretPair, textBody, timestampS } from './arbitraries.js';

const at = (t: number) => ({ now: () => t * 1000 });
const V1 = /v1=([0-9a-f]{64})/g;
const v1s = (header: string): string[] => [...header.matchAll(V1)].map((m) => m[1] as string);

describe('a known answer', () => {
  it('is HMAC-SHA256 keyed with the secret over "<t>.<raw body>", lower-case hex', () => {
    // Computed outside Node: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    const expected = '38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789';
    expect(signatureHeader('{"a":1}', ['whsec_test'], 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
    expect(verifySignature('{"a":1}', `t=1700000000,v1=${expected}`, ['whsec_test'], at(1_700_000_000))).toEqual({
      ok: true,
      timestamp: 1_700_000_000,
    });
  });
});

describe('signatureHeader', () => {
  it('writes t then one v1 per secret, in order, without spaces', () => {
    fc.assert(
      fc.property(rawBody, fc.array(secret, { minLength: 1, maxLength: 3 }), timestampS, (body, secrets, t) => {
        const header = signatureHeader(body, secrets, t);
        expect(header).toMatch(/^t=\d+(,v1=[0-9a-f]{64})+$/);
        expect(header.startsWith(`t=${t},`)).toBe(true);
        expect(v1s(header)).toEqual(secrets.map((s) => v1s(signatureHeader(body, [s], t))[0]));
      }),
    );
  });

  it('refuses what it cannot sign', () => {
    expect(() => signatureHeader('{}', [], 1)).toThrow(RangeError);
    expect(() => signatureHeader('{}', ['s'], 1.5)).toThrow(RangeError);
    expect(() => signatureHeader('{}', ['s'], -1)).toThrow(RangeError);
  });
});

describe('verifySignature', () => {
  it('accepts what signatureHeader signed, text or bytes, with the timestamp', () => {
    fc.assert(
      fc.property(rawBody, secret, timestampS, (body, s, t) => {
        expect(verifySignature(body, signatureHeader(body, [s], t), [s], at(t))).toEqual({ ok: true, timestamp: t });
      }),
    );
  });

  it('signs text as its UTF-8 bytes: the same header verifies the string and its encoding', () => {
    fc.assert(
      fc.property(textBody, secret, timestampS, (body, s, t) => {
        const header = signatureHeader(body, [s], t);
        expect(verifySignature(Buffer.from(body, 'utf8'), header, [s], at(t)).ok).toBe(true);
        expect(verifySignature(new TextEncoder().encode(body), header, [s], at(t)).ok).toBe(true);
      }),
    );
  });

  it('takes a byte body as it is: bytes that are not UTF-8 do not survive a decode and re-encode', () => {
    fc.assert(
      fc.property(byteBody, secret, timestampS, (bytes, s, t) => {
        const decoded = new TextDecoder().decode(bytes);
        fc.pre(!Buffer.from(decoded, 'utf8').equals(Buffer.from(bytes)));
        const header = signatureHeader(bytes, [s], t);
        expect(verifySignature(bytes, header, [s], at(t)).ok).toBe(true);
        expect(verifySignature(decoded, header, [s], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
      }),
    );
  });

  it('refuses a body with any one byte changed', () => {
    const bodyAndIndex = fc
      .uint8Array({ minLength: 1, maxLength: 300 })
      .chain((b) => fc.tuple(fc.constant(b), fc.nat({ max: b.length - 1 }), fc.integer({ min: 1, max: 255 })));
    fc.assert(
      fc.property(bodyAndIndex, secret, timestampS, ([bytes, i, flip], s, t) => {
        const header = signatureHeader(bytes, [s], t);
        const changed = Uint8Array.from(bytes);
        changed[i] = (changed[i] as number) ^ flip;
        expect(verifySignature(changed, header, [s], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
        // The original is untouched and still verifies: the refusal is due to the change alone.
        expect(verifySignature(bytes, header, [s], at(t)).ok).toBe(true);
      }),
    );
  });

  it('refuses JSON that was parsed and serialised again with other spacing', () => {
    fc.assert(
      fc.property(jsonObject, secret, timestampS, (value, s, t) => {
        const sent = JSON.stringify(value, null, 2);
        const reserialised = JSON.stringify(JSON.parse(sent));
        fc.pre(reserialised !== sent);
        const header = signatureHeader(sent, [s], t);
        expect(verifySignature(sent, header, [s], at(t)).ok).toBe(true);
        expect(verifySignature(reserialised, header, [s], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
      }),
    );
  });

  it('refuses a header signed with another secret', () => {
    fc.assert(
      fc.property(rawBody, secretPair, timestampS, (body, [a, b], t) => {
        expect(verifySignature(body, signatureHeader(body, [a], t), [b], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
      }),
    );
  });

  it('during rotation, accepts the header when the receiver knows either secret', () => {
    fc.assert(
      fc.property(rawBody, secretPair, timestampS, (body, [newer, older], t) => {
        const both = signatureHeader(body, [newer, older], t);
        expect(verifySignature(body, both, [newer], at(t)).ok).toBe(true);
        expect(verifySignature(body, both, [older], at(t)).ok).toBe(true);
        expect(verifySignature(body, both, [older, newer], at(t)).ok).toBe(true);
        // A receiver that already has both secrets accepts a header still signed with the old one only.
        expect(verifySignature(body, signatureHeader(body, [older], t), [newer, older], at(t)).ok).toBe(true);
      }),
    );
  });

  it('ignores unknown elements such as v2, wherever they stand', () => {
    fc.assert(
      fc.property(rawBody, secret, timestampS, (body, s, t) => {
        const header = signatureHeader(body, [s], t);
        const [tPart, v1Part] = header.split(',') as [string, string];
        for (const h of [
          `${header},v2=${'ab'.repeat(32)}`,
          `v0=zzz,${header}`,
          `${tPart},v2=whatever,${v1Part}`,
          `${tPart},x,${v1Part},,`,
        ]) {
          expect(verifySignature(body, h, [s], at(t))).toEqual({ ok: true, timestamp: t });
        }
      }),
    );
  });

  it('is lenient about whitespace around elements and accepts upper-case hex', () => {
    const body = '{"id":"evt_1"}';
    const t = 1_700_000_000;
    const [, hex] = signatureHeader(body, ['whsec_x'], t).split(',v1=') as [string, string];
    for (const h of [` t=${t},v1=${hex} `, `t=${t}, v1=${hex}`, `t = ${t} ,\tv1 = ${hex}`, `t=${t},v1=${hex.toUpperCase()}`]) {
      expect(verifySignature(body, h, ['whsec_x'], at(t)).ok).toBe(true);
    }
  });

  it('accepts a timestamp exactly at the tolerance and refuses one a second beyond, either way', () => {
    fc.assert(
      fc.property(rawBody, secret, timestampS, fc.integer({ min: 0, max: 100_000 }), (body, s, t, tol) => {
        const header = signatureHeader(body, [s], t);
        const opts = (nowS: number) => ({ toleranceS: tol, now: () => nowS * 1000 });
        // The receiver's clock ahead of t (a stale or replayed request) and behind it (a future t).
        expect(verifySignature(body, header, [s], opts(t + tol)).ok).toBe(true);
        expect(verifySignature(body, header, [s], opts(t - tol)).ok).toBe(true);
        expect(verifySignature(body, header, [s], opts(t + tol + 1))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
        expect(verifySignature(body, header, [s], opts(t - tol - 1))).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
      }),
    );
  });

  it('defaults to a 300 s tolerance and compares whole seconds', () => {
    const t = 1_700_000_000;
    const header = signatureHeader('{}', ['s'], t);
    expect(DEFAULT_TOLERANCE_S).toBe(300);
    expect(verifySignature('{}', header, ['s'], { now: () => (t + 300) * 1000 + 999 }).ok).toBe(true);
    expect(verifySignature('{}', header, ['s'], { now: () => (t + 301) * 1000 }).ok).toBe(false);
    expect(verifySignature('{}', header, ['s'], { now: () => (t - 301) * 1000 + 999 }).ok).toBe(false);
  });

  it('uses the real clock when none is given', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignature('{}', signatureHeader('{}', ['s'], now), ['s']).ok).toBe(true);
    expect(verifySignature('{}', signatureHeader('{}', ['s'], now - 3600), ['s'])).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  it('checks the signature before the timestamp', () => {
    const t = 1_700_000_000;
    const stale = at(t + 10_000);
    expect(verifySignature('{}', signatureHeader('{}', ['s'], t), ['s'], stale).ok).toBe(false);
    expect(verifySignature('{}', signatureHeader('{}', ['s'], t), ['other'], stale)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('tells a missing header from a malformed one', () => {
    const body = '{}';
    const t = 1_700_000_000;
    const good = signatureHeader(body, ['s'], t);
    const hex = good.split(',v1=')[1] as string;
    expect(verifySignature(body, undefined, ['s'], at(t))).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifySignature(body, '', ['s'], at(t))).toEqual({ ok: false, reason: 'missing_header' });
    expect(verifySignature(body, '   ', ['s'], at(t))).toEqual({ ok: false, reason: 'missing_header' });
    const malformed = [
      'garbage',
      `v1=${hex}`, // no t
      `t=${t}`, // no v1
      `t=${t},v2=${hex}`, // only an unknown scheme
      `t=,v1=${hex}`,
      `t=abc,v1=${hex}`,
      `t=-${t},v1=${hex}`,
      `t=${t}.5,v1=${hex}`,
      `t=1e9,v1=${hex}`,
      `t=${t},t=${t},v1=${hex}`, // t twice
      `t=${'9'.repeat(16)},v1=${hex}`,
      `T=${t},v1=${hex}`,
      `t=${t};v1=${hex}`,
    ];
    for (const h of malformed) expect(verifySignature(body, h, ['s'], at(t)), h).toEqual({ ok: false, reason: 'malformed_header' });
  });

  it('treats a v1 of the wrong length or alphabet as not matching', () => {
    const t = 1_700_000_000;
    const hex = signatureHeader('{}', ['s'], t).split(',v1=')[1] as string;
    for (const v of ['', hex.slice(0, 63), `${hex}0`, `${hex.slice(0, 63)}g`, hex.slice(0, 32)]) {
      expect(verifySignature('{}', `t=${t},v1=${v}`, ['s'], at(t)), v).toEqual({ ok: false, reason: 'no_matching_signature' });
    }
    expect(verifySignature('{}', `t=${t},v1=${'0'.repeat(64)},v1=${hex}`, ['s'], at(t)).ok).toBe(true);
  });

  it('refuses everything when it has no secret', () => {
    const t = 1_700_000_000;
    expect(verifySignature('{}', signatureHeader('{}', ['s'], t), [], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('signs the digits of t as sent', () => {
    // A sender is free to write t with a leading zero; the MAC covers the digits it wrote.
    const t = 1_700_000_000;
    const mac = createHmac('sha256', 's').update(`0${t}.{}`).digest('hex');
    expect(verifySignature('{}', `t=0${t},v1=${mac}`, ['s'], at(t))).toEqual({ ok: true, timestamp: t });
    expect(verifySignature('{}', `t=${t},v1=${mac}`, ['s'], at(t))).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('refuses a negative or NaN tolerance as a programming error', () => {
    expect(() => verifySignature('{}', 't=1,v1=00', ['s'], { toleranceS: -1 })).toThrow(RangeError);
    expect(() => verifySignature('{}', 't=1,v1=00', ['s'], { toleranceS: Number.NaN })).toThrow(RangeError);
    const header = signatureHeader('{}', ['s'], 1_000_000_000);
    expect(verifySignature('{}', header, ['s'], { toleranceS: Number.POSITIVE_INFINITY }).ok).toBe(true);
  });
});

describe('constructEvent', () => {
  const event = { id: 'request.completed:req_01', type: 'request.completed', created: '2025-01-01T00:00:00.000Z', test_mode: true, data: { status: 'COMPLETED' } };
  const body = JSON.stringify(event);
  const t = 1_700_000_000;

  it('returns the parsed body once the signature verifies, from text or bytes', () => {
    const header = signatureHeader(body, ['whsec_a'], t);
    expect(constructEvent(body, header, ['whsec_a'], at(t))).toEqual(event);
    expect(constructEvent(Buffer.from(body), header, ['whsec_a'], at(t))).toEqual(event);
  });

  it('throws WebhookSignatureError with the reason, and parses nothing, when verification fails', () => {
    const cases: Array<[string | undefined, string[], number, string]> = [
      [undefined, ['whsec_a'], t, 'missing_header'],
      ['nope', ['whsec_a'], t, 'malformed_header'],
      [signatureHeader(body, ['whsec_a'], t), ['whsec_b'], t, 'no_matching_signature'],
      [signatureHeader(body, ['whsec_a'], t), ['whsec_a'], t + 301, 'timestamp_out_of_tolerance'],
    ];
    for (const [header, secrets, now, reason] of cases) {
      let thrown: unknown;
      try {
        constructEvent(body, header, secrets, at(now));
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(WebhookSignatureError);
      expect((thrown as WebhookSignatureError).reason).toBe(reason);
      expect((thrown as Error).name).toBe('WebhookSignatureError');
    }
  });

  it('verifies before parsing: a forged body that is not JSON fails on the signature, not on JSON', () => {
    expect(() => constructEvent('not json', signatureHeader('{}', ['whsec_a'], t), ['whsec_a'], at(t))).toThrow(WebhookSignatureError);
    // A genuine body that is not JSON verifies and then fails in JSON.parse.
    expect(() => constructEvent('not json', signatureHeader('not json', ['whsec_a'], t), ['whsec_a'], at(t))).toThrow(SyntaxError);
  });
});
