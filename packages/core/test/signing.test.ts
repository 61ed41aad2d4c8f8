import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SignerView } from '@esig/core';
import {
  MAX_AUTH_ATTEMPTS,
  OTP_SEND_LIMIT,
  OTP_SEND_WINDOW_MS,
  OTP_TTL_MS,
  authenticateSigner,
  cancelSignatureRequest,
  declineAsRecipient,
  getCertificatePdf,
  getFinishedDocument,
  getSigningDocument,
  getSigningFinishedDocument,
  handleExpire,
  handleSeal,
  openSigningLink,
  remindSignatureRequest,
  requestSignerOtp,
  signAsRecipient,
  viewAgreement,
} from '@esig/core';
import { fakeStampPreflight } from '@esig/testkit';
import { codeIn } from './fakes.js';
import { left, right } from './support.js';
import type { Sent, SentSigner, World } from './world.js';
import { CLIENT, claim, eventsOf, evidenceOf, requestNow, runOk, sentRequest, signInput, snapshot, world } from './world.js';

const OTHER_CLIENT = { ip: '203.0.113.9', userAgent: 'curl/8' };
const MIN = 60_000;

const open = (w: World, s: SentSigner, client = CLIENT) => right(openSigningLink(w.deps)(s.token, client));
const sign = (w: World, s: SentSigner, client = CLIENT) => signAsRecipient(w.deps)(s.token, signInput(s), client);
const at = (w: World) => w.h.clock.now().toISOString();
const cancel = (w: World, s: Sent) => right(w.run(cancelSignatureRequest(w.deps)(s.p, s.req.id)));
/** Mails a code to the signer and returns it as the signer reads it. */
const mailedCode = async (w: World, s: SentSigner) => {
  await right(requestSignerOtp(w.deps)(s.token, CLIENT));
  return codeIn(w.mail.sent.at(-1)!.message);
};
const authenticate = (w: World, s: SentSigner, code: string, client = CLIENT) => authenticateSigner(w.deps)(s.token, code, client);

describe('openSigningLink', () => {
  it('records OPENED once: event signer.opened, and evidence with the client’s address and user agent', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [ada] = s.signers;
    const view = await open(w, ada!);
    expect(view.recipient).toMatchObject({ id: ada!.rcp.id, status: 'OPENED' });
    expect(view.request.id).toBe(s.req.id);
    const opened = await eventsOf(w, s.p.tenant, 'signer.opened');
    expect(opened.map((e) => e.data)).toEqual([{ request_id: s.req.id, recipient_id: ada!.rcp.id, opened_at: at(w) }]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'opened')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, at: at(w), ip: CLIENT.ip, userAgent: CLIENT.userAgent }),
    ]);
  });

  it('later visits only read, whatever the recipient or the request has become since', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [ada, bob] = s.signers;
    await open(w, ada!);
    const once = await snapshot(w, s.p.tenant, s.req.id);
    w.h.clock.advance(5 * MIN);
    expect((await open(w, ada!, OTHER_CLIENT)).recipient.status).toBe('OPENED');
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(once);
    // Further along (VIEWED), a visit neither records nor moves the recipient back.
    await right(viewAgreement(w.deps)(ada!.token, CLIENT));
    const viewed = await snapshot(w, s.p.tenant, s.req.id);
    expect((await open(w, ada!)).recipient.status).toBe('VIEWED');
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(viewed);
    // Once the request ended, even a first visit only reads.
    await cancel(w, s);
    const cancelled = await snapshot(w, s.p.tenant, s.req.id);
    const late = await open(w, bob!);
    expect([late.request.status, late.recipient.status]).toEqual(['CANCELLED', 'PENDING']);
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(cancelled);
  });

  it('an unknown or ill-shaped token is NotFound, the one answer for both, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w);
    const real = s.signers[0]!.token;
    const before = await snapshot(w, s.p.tenant, s.req.id);
    const flipCase = (t: string, i: number) => t.slice(0, i) + (t[i] === t[i]!.toUpperCase() ? t[i]!.toLowerCase() : t[i]!.toUpperCase()) + t.slice(i + 1);
    const tokens = fc.oneof(
      fc.string({ maxLength: 140 }),
      fc.stringMatching(/^[A-Za-z0-9]{43,128}$/),
      fc.constantFrom(real.slice(0, 42), `${real}!`, ` ${real}`, `${real}\n`, `${real}/`, real.replace(/./, '-'), `${real}${'a'.repeat(86)}`),
      fc.integer({ min: 0, max: real.length - 1 }).map((i) => flipCase(real, i)),
    );
    await fc.assert(
      fc.asyncProperty(tokens.filter((t) => t !== real), async (token) => {
        expect(await left(openSigningLink(w.deps)(token, CLIENT))).toEqual({ _tag: 'NotFound', resource: 'signing_link', id: 'given' });
      }),
      { numRuns: 150 },
    );
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });
});

describe('viewAgreement', () => {
  it('records VIEWED, event request.viewed and evidence, once', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [ada] = s.signers;
    const view = await right(viewAgreement(w.deps)(ada!.token, CLIENT));
    expect(view.recipient.status).toBe('VIEWED');
    const viewedAt = at(w);
    w.h.clock.advance(MIN);
    await right(viewAgreement(w.deps)(ada!.token, OTHER_CLIENT));
    expect((await eventsOf(w, s.p.tenant, 'request.viewed')).map((e) => e.data)).toEqual([{ request_id: s.req.id, recipient_id: ada!.rcp.id, viewed_at: viewedAt }]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'viewed')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, at: viewedAt, ip: CLIENT.ip, userAgent: CLIENT.userAgent }),
    ]);
  });

  it('refuses a signer who has not passed identification, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const before = await snapshot(w, s.p.tenant, s.req.id);
    expect(await left(viewAgreement(w.deps)(s.signers[0]!.token, CLIENT))).toMatchObject({ _tag: 'InvalidState' });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('once the recipient signed, or the request ended, a view only reads', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [ada, bob] = s.signers;
    await right(sign(w, ada!));
    const signed = await snapshot(w, s.p.tenant, s.req.id);
    expect((await right(viewAgreement(w.deps)(ada!.token, CLIENT))).recipient.status).toBe('SIGNED');
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(signed);
    await cancel(w, s);
    const cancelled = await snapshot(w, s.p.tenant, s.req.id);
    expect((await right(viewAgreement(w.deps)(bob!.token, CLIENT))).recipient.status).toBe('PENDING');
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(cancelled);
  });
});

describe('signAsRecipient', () => {
  it('records the values and the signature: SIGNED, event signer.signed, evidence with the client', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [ada, bob] = s.signers;
    const view = await right(signAsRecipient(w.deps)(ada!.token, { values: { [ada!.text!.id]: '10 High St' }, signature: { kind: 'typed', value: 'Ada L' } }, CLIENT));
    const now = at(w);
    expect(view.recipient).toMatchObject({ status: 'SIGNED', signedAt: now, signature: { kind: 'typed', value: 'Ada L' } });
    const stored = await requestNow(w, s.p.tenant, s.req.id);
    expect(stored.status).toBe('SENT');
    expect(stored.certificateId).toBeNull();
    const values = Object.fromEntries(stored.fields.map((f) => [f.id, f.value]));
    expect(values).toEqual({ [ada!.signature.id]: true, [ada!.text!.id]: '10 High St', [bob!.signature.id]: null, [bob!.text!.id]: null });
    expect((await eventsOf(w, s.p.tenant, 'signer.signed')).map((e) => e.data)).toEqual([{ request_id: s.req.id, recipient_id: ada!.rcp.id, signed_at: now }]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'signed')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, at: now, ip: CLIENT.ip, userAgent: CLIENT.userAgent, details: { signature: 'typed' } }),
    ]);
    // Not the last signature: nothing to seal yet.
    expect(await claim(w, ['seal.complete'])).toEqual([]);
  });

  it('the last signature leaves the request SENT, awaiting its seal, and queues exactly one seal job', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], cc: 1 });
    const [ada, bob] = s.signers;
    await right(sign(w, ada!));
    w.h.clock.advance(MIN);
    const done = await right(sign(w, bob!));
    // COMPLETED means the evidence exists (the spec): the seal job makes it so, with the certificate id.
    expect(done.request).toMatchObject({ status: 'SENT', completedAt: null, certificateId: null, finishedSha256: null });
    expect([done.everyoneSigned, done.finishedDocumentAvailable, done.recipient.status]).toEqual([true, false, 'SIGNED']);
    expect(await requestNow(w, s.p.tenant, s.req.id)).toMatchObject({ status: 'SENT', certificateId: null });
    const seals = await claim(w, ['seal.complete']);
    expect(seals.map((j) => [j.payload, j.dedupeKey, j.runAt])).toEqual([[{ requestId: s.req.id }, `seal:${s.req.id}`, at(w)]]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'completed')).toEqual([expect.objectContaining({ at: at(w), recipientId: null })]);
    // request.completed is released by the seal, with the finished document's digest, not here.
    expect(await eventsOf(w, s.p.tenant, 'request.completed')).toEqual([]);
  });

  it('awaiting its seal, a request is neither cancelled, reminded nor expired, and its PDFs answer InvalidState; the seal completes it', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], expiresAt: new Date(w.h.clock.now().getTime() + 3_600_000).toISOString() });
    for (const x of s.signers) await right(sign(w, x));
    const signed = await requestNow(w, s.p.tenant, s.req.id);
    const beingProduced = { _tag: 'InvalidState', detail: expect.stringContaining('being produced') };
    expect(await left(w.run(cancelSignatureRequest(w.deps)(s.p, s.req.id)))).toMatchObject(beingProduced);
    expect(await left(w.run(remindSignatureRequest(w.deps)(s.p, s.req.id)))).toMatchObject(beingProduced);
    for (const fetch of [getFinishedDocument, getCertificatePdf]) expect(await left(fetch(w.deps)(s.p, s.req.id))).toMatchObject(beingProduced);
    // Past the deadline, the expiry job leaves it alone.
    w.h.clock.advance(3_600_000);
    for (const job of await claim(w, ['expire'])) await runOk(w, handleExpire(w.deps), job);
    expect(await requestNow(w, s.p.tenant, s.req.id)).toEqual(signed);
    for (const job of await claim(w, ['seal.complete'])) await runOk(w, handleSeal(w.deps), job);
    expect((await requestNow(w, s.p.tenant, s.req.id)).status).toBe('COMPLETED');
    expect((await right(getFinishedDocument(w.deps)(s.p, s.req.id))).bytes).toEqual(w.renderer.finished[0]!.output);
  });

  it('any order of parallel signers, with repeated attempts, awaits its seal exactly once, with one seal job', async () => {
    const orders = fc.integer({ min: 1, max: 4 }).chain((n) =>
      fc.tuple(fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }), fc.array(fc.nat(n - 1), { minLength: n, maxLength: n })),
    );
    await fc.assert(
      fc.asyncProperty(orders, async ([order, repeats]) => {
        const w = world();
        const s = await sentRequest(w, { signers: order.map(() => ({})) });
        const signedSoFar = new Set<number>();
        for (const [k, i] of order.entries()) {
          const view = await right(sign(w, s.signers[i]!));
          signedSoFar.add(i);
          const last = k === order.length - 1;
          expect([view.request.status, view.request.certificateId, view.everyoneSigned]).toEqual(['SENT', null, last]);
          // Someone who already signed tries again: refused, whatever the state.
          const again = repeats[k]!;
          if (signedSoFar.has(again)) expect(await left(sign(w, s.signers[again]!))).toMatchObject({ _tag: 'InvalidState' });
        }
        const final = await requestNow(w, s.p.tenant, s.req.id);
        expect(final.status).toBe('SENT');
        expect(final.recipients.every((r) => r.status === 'SIGNED')).toBe(true);
        expect((await claim(w, ['seal.complete'])).map((j) => j.payload.requestId)).toEqual([s.req.id]);
        const evidence = await evidenceOf(w, s.p.tenant, s.req.id);
        expect(evidence.filter((e) => e.action === 'completed')).toHaveLength(1);
        expect(evidence.filter((e) => e.action === 'signed')).toHaveLength(order.length);
        expect(await eventsOf(w, s.p.tenant, 'signer.signed')).toHaveLength(order.length);
      }),
      { numRuns: 25 },
    );
  });

  it('in sequential order, each signature invites exactly the signers of the next order, and only they may sign', async () => {
    const w = world();
    const s = await sentRequest(w, { signingOrder: 'sequential', signers: [{ order: 1 }, { order: 2 }, { order: 2 }, { order: 3 }] });
    const [a, b, c, d] = s.signers;
    const invited = async () => (await claim(w, ['mail.invite'])).map((j) => [j.payload.recipientId, j.dedupeKey]);
    expect(await invited()).toEqual([[a!.rcp.id, `invite:${a!.rcp.id}`]]);
    await right(sign(w, a!));
    expect(await invited()).toEqual([
      [b!.rcp.id, `invite:${b!.rcp.id}`],
      [c!.rcp.id, `invite:${c!.rcp.id}`],
    ]);
    expect(await left(sign(w, d!))).toMatchObject({ _tag: 'InvalidState' });
    await right(sign(w, c!));
    // b is still due and was invited already: no second invitation.
    expect(await invited()).toEqual([]);
    await right(sign(w, b!));
    expect(await invited()).toEqual([[d!.rcp.id, `invite:${d!.rcp.id}`]]);
    expect((await right(sign(w, d!))).everyoneSigned).toBe(true);
    expect(await invited()).toEqual([]);
  });

  it('the view tells each signer whether it is their turn', async () => {
    const w = world();
    const s = await sentRequest(w, { signingOrder: 'sequential', signers: [{ order: 1 }, { order: 2 }, { order: 2 }] });
    const turns = async () => Promise.all(s.signers.map(async (x) => (await open(w, x)).yourTurn));
    expect(await turns()).toEqual([true, false, false]);
    await right(sign(w, s.signers[0]!));
    expect(await turns()).toEqual([false, true, true]);
    await right(sign(w, s.signers[2]!));
    expect(await turns()).toEqual([false, true, false]);
  });

  it('refuses a signer whose turn has not come (InvalidState), before asking the preflight, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w, { signingOrder: 'sequential', signers: [{ order: 1 }, { order: 2 }] });
    const before = await snapshot(w, s.p.tenant, s.req.id);
    const e = await left(sign(w, s.signers[1]!));
    expect(e).toMatchObject({ _tag: 'InvalidState', detail: expect.stringContaining('turn') });
    expect(w.stamps.calls).toEqual([]);
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('refuses a signer who has not passed identification (InvalidState), and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }, { authentication: 'access_code', accessCode: 'blue-42' }] });
    const before = await snapshot(w, s.p.tenant, s.req.id);
    for (const x of s.signers) expect(await left(sign(w, x))).toMatchObject({ _tag: 'InvalidState', detail: expect.stringContaining('identification') });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('refuses values for fields that are not this signer’s, and values for the fields it fills itself', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [ada, bob] = s.signers;
    const before = await snapshot(w, s.p.tenant, s.req.id);
    const own = { [ada!.text!.id]: 'mine' };
    for (const [extra, path] of [
      [{ [bob!.text!.id]: 'not mine' }, `values.${bob!.text!.id}`],
      [{ fld_unknown: 'x' }, 'values.fld_unknown'],
      [{ [ada!.signature.id]: true }, `values.${ada!.signature.id}`],
    ] as const) {
      const e = await left(signAsRecipient(w.deps)(ada!.token, { values: { ...own, ...extra }, signature: { kind: 'typed', value: 'Ada' } }, CLIENT));
      expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path }] });
    }
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('refuses a required field without a value (absent, blank, or false for a checkbox)', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [ada] = s.signers;
    const before = await snapshot(w, s.p.tenant, s.req.id);
    for (const values of [{}, { [ada!.text!.id]: '' }, { [ada!.text!.id]: '   ' }, { [ada!.text!.id]: false }]) {
      const e = await left(signAsRecipient(w.deps)(ada!.token, { values, signature: { kind: 'typed', value: 'Ada' } }, CLIENT));
      expect(e, JSON.stringify(values)).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: `values.${ada!.text!.id}` }] });
    }
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('turns the preflight’s problems into ValidationFailed naming each path, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [ada] = s.signers;
    const stamps = fakeStampPreflight((v) => v.includes('✍'));
    const before = await snapshot(w, s.p.tenant, s.req.id);
    const e = await left(signAsRecipient({ ...w.deps, stamps })(ada!.token, { values: { [ada!.text!.id]: 'at ✍' }, signature: { kind: 'typed', value: '✍ Ada' } }, CLIENT));
    expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'signature.value' }, { path: `values.${ada!.text!.id}` }] });
    expect(stamps.calls).toHaveLength(1);
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });

  it('refuses once the request ended (InvalidState)', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    await cancel(w, s);
    const before = await snapshot(w, s.p.tenant, s.req.id);
    expect(await left(sign(w, s.signers[0]!))).toMatchObject({ _tag: 'InvalidState' });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });
});

describe('declineAsRecipient', () => {
  it('ends the request and its documents DECLINED; the reason goes to the evidence, never to the event', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], documents: 2 });
    const [ada, bob] = s.signers;
    const reason = 'The rent is wrong: 1 200 €, not 2 100 €';
    const view = await right(declineAsRecipient(w.deps)(ada!.token, reason, CLIENT));
    const now = at(w);
    expect(view.request).toMatchObject({ status: 'DECLINED', declinedAt: now });
    expect(view.recipient).toMatchObject({ status: 'DECLINED', declinedAt: now, declineReason: reason });
    for (const d of s.docs) expect((await right(w.h.stores.documents.findById(s.p.tenant, d.doc.id)))!.status).toBe('DECLINED');
    const declined = await eventsOf(w, s.p.tenant, 'request.declined');
    expect(declined.map((e) => e.data)).toEqual([{ request_id: s.req.id, recipient_id: ada!.rcp.id, status: 'DECLINED', declined_at: now }]);
    expect(JSON.stringify(await eventsOf(w, s.p.tenant))).not.toContain('rent');
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'declined')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, ip: CLIENT.ip, userAgent: CLIENT.userAgent, details: { reason } }),
    ]);
    // The other signer can do nothing more.
    expect(await left(sign(w, bob!))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(declineAsRecipient(w.deps)(bob!.token, 'me neither', CLIENT))).toMatchObject({ _tag: 'InvalidState' });
  });

  it('is open to a signer still identifying (a locked-out one can still refuse), not to one who signed', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, { authentication: 'access_code', accessCode: 'blue-42' }] });
    const [ada, bob] = s.signers;
    await right(sign(w, ada!));
    const signed = await snapshot(w, s.p.tenant, s.req.id);
    expect(await left(declineAsRecipient(w.deps)(ada!.token, 'changed my mind', CLIENT))).toMatchObject({ _tag: 'InvalidState' });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(signed);
    for (let i = 0; i < MAX_AUTH_ATTEMPTS; i++) await left(authenticate(w, bob!, 'wrong'));
    expect((await right(declineAsRecipient(w.deps)(bob!.token, 'not me', CLIENT))).request.status).toBe('DECLINED');
  });
});

describe('requestSignerOtp', () => {
  it('mails a six-digit code through the transport of the request’s tenant, and stores only its hash', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    expect(await right(requestSignerOtp(w.deps)(ada!.token, CLIENT))).toEqual({ sentTo: 's…@example.com' });
    expect(w.mail.sent).toHaveLength(1);
    const { tenant, message } = w.mail.sent[0]!;
    expect(tenant).toEqual(s.p.tenant);
    expect(message.to).toBe('signer1@example.com');
    const code = codeIn(message);
    expect(code).toMatch(/^\d{6}$/);
    const stored = (await requestNow(w, s.p.tenant, s.req.id)).recipients[0]!;
    expect(stored.otp).toEqual({ codeHash: w.h.crypto.sha256Hex(`otp:${ada!.rcp.id}:${code}`), expiresAt: new Date(w.h.clock.now().getTime() + OTP_TTL_MS).toISOString() });
    expect(Object.values(stored).map((v) => JSON.stringify(v))).not.toContain(JSON.stringify(code));
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'otp_sent')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, ip: CLIENT.ip, userAgent: CLIENT.userAgent, details: {} }),
    ]);
    // The code is nowhere in the evidence or the events either.
    expect(JSON.stringify([await evidenceOf(w, s.p.tenant, s.req.id), await eventsOf(w, s.p.tenant)])).not.toContain(code);
  });

  it(`mails at most ${OTP_SEND_LIMIT} codes in 10 minutes; then RateLimited with the seconds until the oldest is 10 minutes old`, async () => {
    expect([OTP_SEND_LIMIT, OTP_SEND_WINDOW_MS]).toEqual([3, 10 * MIN]);
    const gaps = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 6 * MIN }), fc.constantFrom(10 * MIN - 1, 10 * MIN)), { minLength: 1, maxLength: 9 });
    await fc.assert(
      fc.asyncProperty(gaps, async (steps) => {
        const w = world();
        const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
        const sentAt: number[] = [];
        for (const gap of steps) {
          w.h.clock.advance(gap);
          const now = w.h.clock.now().getTime();
          const recent = sentAt.filter((t) => t > now - OTP_SEND_WINDOW_MS);
          const r = await requestSignerOtp(w.deps)(s.signers[0]!.token, CLIENT)();
          if (recent.length < OTP_SEND_LIMIT) {
            expect(r._tag).toBe('Right');
            sentAt.push(now);
          } else {
            expect(r).toEqual({ _tag: 'Left', left: { _tag: 'RateLimited', retryAfterS: Math.max(1, Math.ceil((recent[0]! + OTP_SEND_WINDOW_MS - now) / 1000)) } });
          }
          expect(w.mail.sent).toHaveLength(sentAt.length);
        }
        expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'otp_sent')).toHaveLength(sentAt.length);
      }),
      { numRuns: 30 },
    );
  });

  it('a new code lifts a lock-out, and only the new code identifies', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    const old = await mailedCode(w, ada!);
    const wrong = old === '000000' ? '111111' : '000000';
    for (let i = 0; i < MAX_AUTH_ATTEMPTS; i++) await left(authenticate(w, ada!, wrong));
    expect((await open(w, ada!)).locked).toBe(true);
    expect(await left(authenticate(w, ada!, old))).toMatchObject({ _tag: 'InvalidState' });
    const fresh = await mailedCode(w, ada!);
    expect(fresh).not.toBe(old);
    expect((await open(w, ada!)).locked).toBe(false);
    expect((await requestNow(w, s.p.tenant, s.req.id)).recipients[0]!.authFailures).toBe(0);
    expect(await left(authenticate(w, ada!, old))).toMatchObject({ _tag: 'ValidationFailed' });
    expect((await right(authenticate(w, ada!, fresh))).authenticated).toBe(true);
  });

  it('a mail server refusing the code is MailUnavailable; asked again once it is back, the new code alone identifies', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    // The signer is told the code did not go out, not what the mail server or the connection to it said
    // (its address, its replies, this server's configuration): that is the cause, for the server's log.
    const failures: Array<[boolean, string]> = [
      [false, 'ECONNECTION connect ECONNREFUSED 10.0.0.5:587'],
      [true, 'EENVELOPE 550 RCPT TO 550 5.1.1 <ada@example.com>: relay access denied by mx1.internal.example'],
    ];
    for (const [permanent, detail] of failures) {
      w.mail.fail(permanent, detail);
      const e = await left(requestSignerOtp(w.deps)(ada!.token, CLIENT));
      expect(e).toEqual({ _tag: 'MailUnavailable', detail: 'The code could not be sent just now; ask for a new one in a few minutes.', cause: detail });
    }
    const lost = w.mail.attempts.map((a) => codeIn(a.message));
    expect(w.mail.sent).toEqual([]);
    w.mail.recover();
    const code = await mailedCode(w, ada!);
    for (const c of lost) if (c !== code) expect(await left(authenticate(w, ada!, c))).toMatchObject({ _tag: 'ValidationFailed' });
    expect((await right(authenticate(w, ada!, code))).authenticated).toBe(true);
  });

  it('only an email_otp signer still to identify gets a code (InvalidState otherwise), and nothing is mailed', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, { authentication: 'access_code', accessCode: 'blue-42' }, { authentication: 'email_otp' }] });
    const [none, access, otp] = s.signers;
    for (const x of [none!, access!]) expect(await left(requestSignerOtp(w.deps)(x.token, CLIENT))).toMatchObject({ _tag: 'InvalidState' });
    await right(authenticate(w, otp!, await mailedCode(w, otp!)));
    expect(await left(requestSignerOtp(w.deps)(otp!.token, CLIENT))).toMatchObject({ _tag: 'InvalidState' });
    expect(w.mail.attempts).toHaveLength(1);
    expect(await left(requestSignerOtp(w.deps)('x'.repeat(43), CLIENT))).toMatchObject({ _tag: 'NotFound' });
  });
});

describe('authenticateSigner', () => {
  it('the right code identifies: event signer.authenticated, evidence, and the agreement is shown', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    const code = await mailedCode(w, ada!);
    w.h.clock.advance(MIN);
    const view = await right(authenticate(w, ada!, code));
    const now = at(w);
    expect(view).toMatchObject({ authenticated: true, locked: false, email: 'signer1@example.com' });
    expect(view.documents.map((d) => d.id)).toEqual([s.docs[0]!.doc.id]);
    expect(view.fields.map((f) => f.id)).toEqual([ada!.signature.id, ada!.text!.id]);
    expect(view.recipient).toMatchObject({ authenticatedAt: now, otp: null });
    expect((await eventsOf(w, s.p.tenant, 'signer.authenticated')).map((e) => e.data)).toEqual([
      { request_id: s.req.id, recipient_id: ada!.rcp.id, method: 'email_otp', authenticated_at: now },
    ]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'authenticated')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, at: now, ip: CLIENT.ip, details: { method: 'email_otp' } }),
    ]);
    // Identified: signing is open now.
    expect((await right(sign(w, ada!))).recipient.status).toBe('SIGNED');
  });

  it('a wrong code is counted in its own commit and refused (ValidationFailed) with the attempts left', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    const code = await mailedCode(w, ada!);
    const wrong = code === '999999' ? '999998' : '999999';
    const e = await left(authenticate(w, ada!, wrong, OTHER_CLIENT));
    expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'code', message: 'The code is not correct. 4 attempt(s) left.' }] });
    const stored = await requestNow(w, s.p.tenant, s.req.id);
    expect(stored.recipients[0]).toMatchObject({ authFailures: 1, authenticatedAt: null });
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((x) => x.action === 'authentication_failed')).toEqual([
      expect.objectContaining({ recipientId: ada!.rcp.id, ip: OTHER_CLIENT.ip, userAgent: OTHER_CLIENT.userAgent }),
    ]);
    expect(await eventsOf(w, s.p.tenant, 'signer.authenticated')).toEqual([]);
    // The code itself still works.
    expect((await right(authenticate(w, ada!, code))).authenticated).toBe(true);
  });

  it('a code is good for 10 minutes: from the instant it expires it is refused as no longer pending, and counted', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }, { authentication: 'email_otp' }] });
    const [ada, bob] = s.signers;
    const a = await mailedCode(w, ada!);
    const b = await mailedCode(w, bob!);
    w.h.clock.advance(OTP_TTL_MS - 1);
    expect((await right(authenticate(w, ada!, a))).authenticated).toBe(true);
    w.h.clock.advance(1);
    expect(await left(authenticate(w, bob!, b))).toMatchObject({ _tag: 'ValidationFailed', detail: 'No valid code is pending; ask for a new one. 4 attempt(s) left.' });
    expect((await requestNow(w, s.p.tenant, s.req.id)).recipients[1]!.authFailures).toBe(1);
  });

  it(`locks after ${MAX_AUTH_ATTEMPTS} failures: the last one and every later attempt are InvalidState, the right code too, and no longer counted`, async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
    const [ada] = s.signers;
    const code = await mailedCode(w, ada!);
    const wrong = code === '123456' ? '654321' : '123456';
    for (let i = 1; i < MAX_AUTH_ATTEMPTS; i++)
      expect(await left(authenticate(w, ada!, wrong))).toMatchObject({ _tag: 'ValidationFailed', detail: expect.stringContaining(`${MAX_AUTH_ATTEMPTS - i} attempt(s) left`) });
    expect(await left(authenticate(w, ada!, wrong))).toMatchObject({ _tag: 'InvalidState' });
    const locked = await snapshot(w, s.p.tenant, s.req.id);
    expect(locked.request.recipients[0]!.authFailures).toBe(MAX_AUTH_ATTEMPTS);
    expect(await left(authenticate(w, ada!, code))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(authenticate(w, ada!, wrong))).toMatchObject({ _tag: 'InvalidState' });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(locked);
    expect((await open(w, ada!)).locked).toBe(true);
  });

  it('any sequence of attempts identifies exactly when the right code comes before the fifth failure', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), async (attempts) => {
        const w = world();
        const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }] });
        const [ada] = s.signers;
        const code = await mailedCode(w, ada!);
        const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
        let failures = 0;
        let identified = false;
        for (const right_ of attempts) {
          const r = await authenticate(w, ada!, right_ ? code : wrong)();
          if (identified) expect(r).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidState' } });
          else if (failures >= MAX_AUTH_ATTEMPTS) expect(r).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidState' } });
          else if (right_) {
            expect(r._tag).toBe('Right');
            identified = true;
          } else {
            failures++;
            expect(r).toMatchObject({ _tag: 'Left', left: { _tag: failures >= MAX_AUTH_ATTEMPTS ? 'InvalidState' : 'ValidationFailed' } });
          }
        }
        const rec = (await requestNow(w, s.p.tenant, s.req.id)).recipients[0]!;
        expect(rec.authFailures).toBe(failures);
        expect(rec.authenticatedAt !== null).toBe(identified);
      }),
      { numRuns: 30 },
    );
  });

  it('a code mailed to one signer does not identify another', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }, { authentication: 'email_otp' }] });
    const [ada, bob] = s.signers;
    const a = await mailedCode(w, ada!);
    await mailedCode(w, bob!);
    expect(await left(authenticate(w, bob!, a))).toMatchObject({ _tag: 'ValidationFailed' });
    expect((await requestNow(w, s.p.tenant, s.req.id)).recipients.map((r) => r.authFailures)).toEqual([0, 1]);
  });

  it('an access code set by the sender identifies; a wrong one counts; its lock-out stays, for no new code can be asked for', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'access_code', accessCode: 'blue-42' }, { authentication: 'access_code', accessCode: 'red-7' }] });
    const [ada, bob] = s.signers;
    expect(await left(authenticate(w, ada!, 'red-7'))).toMatchObject({ _tag: 'ValidationFailed', detail: 'The code is not correct. 4 attempt(s) left.' });
    const view = await right(authenticate(w, ada!, 'blue-42'));
    expect(view.authenticated).toBe(true);
    expect((await eventsOf(w, s.p.tenant, 'signer.authenticated')).map((e) => e.data.method)).toEqual(['access_code']);
    for (let i = 0; i < MAX_AUTH_ATTEMPTS; i++) await left(authenticate(w, bob!, 'blue-42'));
    expect(await left(authenticate(w, bob!, 'red-7'))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(requestSignerOtp(w.deps)(bob!.token, CLIENT))).toMatchObject({ _tag: 'InvalidState' });
    expect((await open(w, bob!)).locked).toBe(true);
  });

  it('a signer with nothing to identify, or identified already, is refused without a count', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, { authentication: 'access_code', accessCode: 'blue-42' }] });
    const [none, access] = s.signers;
    await right(authenticate(w, access!, 'blue-42'));
    const before = await snapshot(w, s.p.tenant, s.req.id);
    for (const [x, code] of [[none!, '123456'], [access!, 'blue-42'], [access!, 'nope']] as const) expect(await left(authenticate(w, x, code))).toMatchObject({ _tag: 'InvalidState' });
    expect(await snapshot(w, s.p.tenant, s.req.id)).toEqual(before);
  });
});

describe('getSigningDocument and getSigningFinishedDocument', () => {
  it('an original document only once identified, with the bytes uploaded', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }], documents: 2 });
    const [ada] = s.signers;
    for (const d of s.docs) expect(await left(getSigningDocument(w.deps)(ada!.token, d.doc.id))).toMatchObject({ _tag: 'InvalidState', detail: 'Identification is required first.' });
    await right(authenticate(w, ada!, await mailedCode(w, ada!)));
    for (const d of s.docs) expect(await right(getSigningDocument(w.deps)(ada!.token, d.doc.id))).toEqual({ name: d.doc.name, bytes: d.bytes });
  });

  it('a document that is not in the link’s request is NotFound, whatever else exists', async () => {
    const w = world();
    const s = await sentRequest(w);
    const other = await sentRequest(w);
    for (const id of [other.docs[0]!.doc.id, 'doc_unknown', ''])
      expect(await left(getSigningDocument(w.deps)(s.signers[0]!.token, id))).toMatchObject({ _tag: 'NotFound', resource: 'document' });
    expect(await left(getSigningDocument(w.deps)('y'.repeat(43), s.docs[0]!.doc.id))).toMatchObject({ _tag: 'NotFound', resource: 'signing_link' });
  });

  it('after the request ended only the finished document, and that once sealed, through any recipient’s link', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [ada, bob] = s.signers;
    const notAvailable = { _tag: 'InvalidState', detail: 'The finished document is not available.' };
    expect(await left(getSigningFinishedDocument(w.deps)(ada!.token))).toEqual(notAvailable);
    for (const x of s.signers) await right(sign(w, x));
    // Every signer signed, not yet sealed: neither the originals nor the finished document.
    expect(await left(getSigningDocument(w.deps)(ada!.token, s.docs[0]!.doc.id))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(getSigningFinishedDocument(w.deps)(ada!.token))).toEqual(notAvailable);
    for (const job of await claim(w, ['seal.complete'])) await runOk(w, handleSeal(w.deps), job);
    const finished = w.renderer.finished[0]!.output;
    for (const x of [ada!, bob!]) {
      expect(await right(getSigningFinishedDocument(w.deps)(x.token))).toEqual({ name: 'Lease.pdf', bytes: finished });
      expect(await left(getSigningDocument(w.deps)(x.token, s.docs[0]!.doc.id))).toMatchObject({ _tag: 'InvalidState' });
    }
  });

  it('a request that was declined, cancelled or expired has no finished document, and shows no original', async () => {
    for (const end of ['declined', 'cancelled', 'expired'] as const) {
      const w = world();
      const s = await sentRequest(w, { expiresAt: new Date(w.h.clock.now().getTime() + 3_600_000).toISOString() });
      const [ada] = s.signers;
      if (end === 'declined') await right(declineAsRecipient(w.deps)(ada!.token, 'no', CLIENT));
      if (end === 'cancelled') await cancel(w, s);
      if (end === 'expired') {
        w.h.clock.advance(3_600_000);
        for (const job of await claim(w, ['expire'])) await runOk(w, handleExpire(w.deps), job);
      }
      expect((await requestNow(w, s.p.tenant, s.req.id)).status).toBe(end.toUpperCase());
      expect(await left(getSigningFinishedDocument(w.deps)(ada!.token))).toMatchObject({ _tag: 'InvalidState' });
      expect(await left(getSigningDocument(w.deps)(ada!.token, s.docs[0]!.doc.id))).toMatchObject({ _tag: 'InvalidState' });
    }
  });
});

describe('the signer view', () => {
  const shown = (v: SignerView) => ({ email: v.email, documents: v.documents.map((d) => d.id), fields: v.fields.map((f) => f.id), authenticated: v.authenticated });

  it('before identification: the address masked, no documents, no fields', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{ authentication: 'email_otp' }, { authentication: 'access_code', accessCode: 'blue-42' }] });
    for (const x of s.signers) expect(shown(await open(w, x))).toEqual({ email: 's…@example.com', documents: [], fields: [], authenticated: false });
  });

  it('once identified: the full address, the request’s documents in order, and only this signer’s own fields', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, { authentication: 'access_code', accessCode: 'blue-42' }], documents: 3 });
    const [ada, bob] = s.signers;
    await right(authenticate(w, bob!, 'blue-42'));
    const docs = s.docs.map((d) => d.doc.id);
    expect(shown(await open(w, ada!))).toEqual({ email: 'signer1@example.com', documents: docs, fields: [ada!.signature.id, ada!.text!.id], authenticated: true });
    expect(shown(await open(w, bob!))).toEqual({ email: 'signer2@example.com', documents: docs, fields: [bob!.signature.id, bob!.text!.id], authenticated: true });
  });

  it('after the request ended: no documents, no fields and nobody’s turn, whatever the ending; the finished document once sealed', async () => {
    const w = world();
    const done = await sentRequest(w, { signers: [{}, {}] });
    for (const x of done.signers) await right(sign(w, x));
    const unsealed = await open(w, done.signers[0]!);
    expect([unsealed.request.status, unsealed.everyoneSigned, unsealed.finishedDocumentAvailable, unsealed.documents, unsealed.fields, unsealed.yourTurn]).toEqual(['SENT', true, false, [], [], false]);
    for (const job of await claim(w, ['seal.complete'])) await runOk(w, handleSeal(w.deps), job);
    for (const x of done.signers) {
      const v = await open(w, x);
      expect([v.request.status, v.everyoneSigned, v.finishedDocumentAvailable, v.documents, v.fields, v.yourTurn, v.email]).toEqual(['COMPLETED', true, true, [], [], false, x.rcp.email]);
    }
    const declined = await sentRequest(w, { signers: [{}, {}] });
    await right(declineAsRecipient(w.deps)(declined.signers[0]!.token, 'no', CLIENT));
    const cancelled = await sentRequest(w);
    await cancel(w, cancelled);
    for (const x of [...declined.signers, ...cancelled.signers]) {
      const v = await open(w, x);
      expect([v.finishedDocumentAvailable, v.documents, v.fields, v.yourTurn]).toEqual([false, [], [], false]);
    }
  });
});
