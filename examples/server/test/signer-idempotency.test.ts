// The signer API's writes take an Idempotency-Key as every write does (spec §4: "Allowed on every write call"):
// a repeat is a replay of the stored answer, not a second run nor a 409 for a step already taken. On SQLite and on
// PostgreSQL, whose commands run under the key with their writes deferred.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { createTestDatabase, postgresAvailable } from './pg.js';

const pgAvailable = await postgresAvailable('the signer API idempotency tests on PostgreSQL');
const SERVER = { ESIG_WORKER_POLL_MS: '50', ESIG_PUBLIC_URL: 'http://esig.test' };

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
] as const)('Idempotency-Key on the signer API (%s)', (_store, postgres) => {
  let s: TestServer;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    if (postgres && !pgAvailable) return;
    if (postgres) {
      const db = await createTestDatabase('esig_signer_idem');
      drop = db.drop;
      s = await startTestServer({ ...SERVER, ESIG_DATABASE_URL: db.url, ESIG_MASTER_KEY: randomBytes(32).toString('hex') });
    } else s = await startTestServer(SERVER);
  });
  afterAll(async () => {
    await s?.close();
    await drop?.();
  });

  let n = 0;
  const freshKey = () => `signer-${process.pid}-${n++}`;

  /** A sent request with two signers, each with an address and a signature field of their own, and their tokens. */
  const sent = async (o: { accessCode?: string } = {}) => {
    const doc = await s.uploadPdf('idem.pdf', 1);
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Idempotent signing', documentIds: [doc.id] } })).body;
    const signers = [];
    for (const name of ['ada', 'bob']) {
      const email = `${name}.${req.id.slice(-10).toLowerCase()}@example.com`;
      const auth = o.accessCode === undefined ? {} : { authentication: 'access_code', accessCode: o.accessCode };
      const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: name, lastName: 'T', ...auth } })).body;
      const y = name === 'ada' ? 600 : 500;
      await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y, width: 200, height: 50 } });
      signers.push({ email, rcp });
    }
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {} })).status).toBe(200);
    const [ada, bob] = await Promise.all(signers.map(async (x) => ({ ...x, token: await s.signingToken(x.email) })));
    return { req, ada: ada!, bob: bob! };
  };

  const post = (token: string, action: string, body: unknown, key?: string) =>
    s.call('POST', `/api/v1/signing/${token}/${action}`, { key: null, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const events = async (requestId: string, type: string) =>
    ((await s.call('GET', `/api/v1/events?type=${type}&limit=100`)).body.data as Array<{ data: Record<string, unknown> }>).filter((e) => e.data.request_id === requestId).length;
  const typed = (value: string) => ({ values: {}, signature: { kind: 'typed', value } });

  describe.skipIf(postgres && !pgAvailable)('writes', () => {
    it('sign: a repeat replays the answer and signs nothing again; another body is 422; the step itself is not repeatable', async () => {
      const { req, ada } = await sent();
      expect((await post(ada.token, 'view', {})).status).toBe(200);
      const key = freshKey();
      const first = await post(ada.token, 'sign', typed('Ada T'), key);
      expect(first.status, first.text).toBe(200);
      expect(first.headers.get('idempotency-replayed')).toBeNull();
      expect(first.body.recipient.status).toBe('SIGNED');

      const again = await post(ada.token, 'sign', typed('Ada T'), key);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await events(req.id, 'signer.signed')).toBe(1);

      const other = await post(ada.token, 'sign', typed('Someone else'), key);
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
      // Without the key, the same call is the step taken twice: refused, as before.
      expect((await post(ada.token, 'sign', typed('Ada T'))).body.code).toBe('invalid_state');
    });

    it("a key is replayed only to the link that used it: another signer repeating it runs their own call, and never sees the first one's answer", async () => {
      const { ada, bob } = await sent();
      const key = freshKey();
      const first = await post(ada.token, 'view', {}, key);
      expect(first.status).toBe(200);
      const other = await post(bob.token, 'view', {}, key);
      expect(other.status).toBe(200);
      expect(other.headers.get('idempotency-replayed')).toBeNull();
      expect(other.body.recipient.email).toBe(bob.email);
      expect(other.text).not.toContain(ada.email);
      // And each link's record answers its own repeat.
      const again = await post(bob.token, 'view', {}, key);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(other.text);
    });

    it('decline: a repeat replays the answer, and the request is declined once', async () => {
      const { req, ada } = await sent();
      const key = freshKey();
      const first = await post(ada.token, 'decline', { reason: 'Wrong address' }, key);
      expect(first.status, first.text).toBe(200);
      const again = await post(ada.token, 'decline', { reason: 'Wrong address' }, key);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await events(req.id, 'request.declined')).toBe(1);
    });

    it('authenticate: a wrong code is counted once, and its refusal replayed; the right code under a new key passes', async () => {
      const { ada } = await sent({ accessCode: '4321' });
      const key = freshKey();
      const wrong = await post(ada.token, 'authenticate', { code: '0000' }, key);
      expect(wrong.status).toBe(400);
      expect(wrong.body.detail).toBe('The code is not correct. 4 attempt(s) left.');
      const replayed = await post(ada.token, 'authenticate', { code: '0000' }, key);
      expect(replayed.status).toBe(400);
      expect(replayed.headers.get('idempotency-replayed')).toBe('true');
      expect(replayed.body.detail).toBe(wrong.body.detail);
      // The replay counted nothing: the next wrong code (no key) is the second failure.
      expect((await post(ada.token, 'authenticate', { code: '1111' })).body.detail).toBe('The code is not correct. 3 attempt(s) left.');
      const right = await post(ada.token, 'authenticate', { code: '4321' }, freshKey());
      expect(right.status, right.text).toBe(200);
      expect(right.body.recipient.authenticated).toBe(true);
      expect(right.body.documents.length).toBe(1);
    });

    it("a link's keys are its own: no signer can take or learn of a key the organization's API clients use, nor they one of the link's", async () => {
      const { req, ada } = await sent();
      // The documented pattern for a send's key: a signer knows the request's id, and could guess it.
      const used = `send-again-${req.id}`;
      expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/remind`, { body: {}, headers: { 'idempotency-key': used } })).status).toBe(200);
      const probe = await post(ada.token, 'view', {}, used);
      expect(probe.status).toBe(200);
      expect(probe.headers.get('idempotency-replayed')).toBeNull();
      // A key a signer used first does not block the sender's call with the same key.
      const squatted = `cancel-${req.id}`;
      expect((await post(ada.token, 'view', {}, squatted)).status).toBe(200);
      const cancel = await s.call('POST', `/api/v1/signature-requests/${req.id}/cancel`, { body: {}, headers: { 'idempotency-key': squatted } });
      expect(cancel.status, cancel.text).toBe(200);
      expect(cancel.headers.get('idempotency-replayed')).toBeNull();
    });

    it('an unknown link is 404 and an ill-formed key 400, before any record is looked up or kept', async () => {
      const { ada } = await sent();
      const key = freshKey();
      const unknown = await post('A'.repeat(43), 'view', {}, key);
      expect(unknown.status).toBe(404);
      // The link is known to be unknown before the key is looked at.
      expect((await post('A'.repeat(43), 'view', {}, 'x'.repeat(256))).status).toBe(404);
      expect((await post(ada.token, 'view', {}, 'x'.repeat(256))).status).toBe(400);
      // The key was not taken by the unknown link's call.
      const first = await post(ada.token, 'view', {}, key);
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotency-replayed')).toBeNull();
    });
  });
});
