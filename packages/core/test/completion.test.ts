import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { Recipient, SignatureRequest } from '@esig/core';
import { RECIPIENT_STATUSES } from '@esig/core';
import { allSignersSigned, awaitingSeal, signersDue, transition } from '@esig/core/internal';
import { T0, TYPED_SIGNATURE, baseRequest, field, iso, orderArb, recipient, roleArb, signingOrderArb } from './arbitraries.js';

/** Roles with at least one signer, cc recipients mixed in anywhere. */
const rolesArb = fc
  .array(roleArb, { maxLength: 10 })
  .chain((roles) => fc.integer({ min: 0, max: roles.length }).map((at) => [...roles.slice(0, at), 'signer' as const, ...roles.slice(at)]));

const sentWith = (recipients: Recipient[], signingOrder: 'parallel' | 'sequential'): SignatureRequest =>
  baseRequest({
    status: 'SENT',
    sentAt: iso(T0),
    signingOrder,
    recipients,
    fields: recipients.filter((r) => r.role === 'signer').map((r) => field(`fld_${r.id}`, 'doc_0', r.id, 'signature')),
    version: 2,
  });

const sign = (r: SignatureRequest, id: string) =>
  transition(r, { type: 'Sign', recipientId: id, values: {}, signature: TYPED_SIGNATURE }, new Date(T0 + 1000));

const ids = (rs: readonly Recipient[]) => rs.map((r) => r.id).sort();

describe('completion rule, parallel signing', () => {
  it('awaits its seal exactly when the last signer signs, in any order, whatever cc recipients there are', () => {
    fc.assert(
      fc.property(
        rolesArb.chain((roles) => {
          const recipients = roles.map((role, i) => recipient(`rcp_${i}`, role, 1));
          const signerIds = recipients.filter((r) => r.role === 'signer').map((r) => r.id);
          return fc.tuple(fc.constant(recipients), fc.shuffledSubarray(signerIds, { minLength: signerIds.length }));
        }),
        ([recipients, order]) => {
          let r = sentWith(recipients, 'parallel');
          const pending = new Set(order);
          for (const [i, id] of order.entries()) {
            expect(allSignersSigned(r)).toBe(false);
            expect(ids(signersDue(r))).toEqual([...pending].sort());
            const next = sign(r, id);
            if (E.isLeft(next)) throw new Error(`signer ${id} refused: ${JSON.stringify(next.left)}`);
            r = next.right;
            pending.delete(id);
            const last = i === order.length - 1;
            // COMPLETED waits for the evidence (the seal): the last signature leaves the request SENT.
            expect(r.status).toBe('SENT');
            expect(allSignersSigned(r)).toBe(last);
            expect(awaitingSeal(r)).toBe(last);
            expect(r.certificateId).toBeNull();
          }
          expect(signersDue(r)).toEqual([]);
          // cc recipients were never asked for anything.
          for (const x of r.recipients) if (x.role === 'cc') expect(x.status).toBe('PENDING');
        },
      ),
    );
  });
});

describe('completion rule, sequential signing', () => {
  it('lets only the lowest pending order sign, and awaits its seal after the last one', () => {
    fc.assert(
      fc.property(
        rolesArb.chain((roles) =>
          fc.tuple(
            fc.constant(roles),
            fc.array(orderArb, { minLength: roles.length, maxLength: roles.length }),
            fc.array(fc.double({ noNaN: true }), { minLength: roles.length, maxLength: roles.length }),
          ),
        ),
        ([roles, orders, tieBreak]) => {
          const recipients = roles.map((role, i) => recipient(`rcp_${i}`, role, orders[i]!));
          const signers = recipients.map((x, i) => ({ x, k: tieBreak[i]! })).filter(({ x }) => x.role === 'signer');
          // Any order that respects `order` (ties in any order) must succeed.
          const plan = signers.sort((a, b) => a.x.order - b.x.order || a.k - b.k).map(({ x }) => x);
          let r = sentWith(recipients, 'sequential');
          for (const [i, me] of plan.entries()) {
            const waiting = plan.slice(i);
            const first = Math.min(...waiting.map((x) => x.order));
            expect(ids(signersDue(r))).toEqual(ids(waiting.filter((x) => x.order === first)));
            // Nobody of a later order may sign yet.
            for (const later of waiting.filter((x) => x.order > first)) expect(E.isLeft(sign(r, later.id))).toBe(true);
            const next = sign(r, me.id);
            if (E.isLeft(next)) throw new Error(`signer ${me.id} refused: ${JSON.stringify(next.left)}`);
            r = next.right;
            expect(r.status).toBe('SENT');
            expect(awaitingSeal(r)).toBe(i === plan.length - 1);
          }
        },
      ),
    );
  });
});

describe('allSignersSigned and signersDue on any recipients', () => {
  it('follow their definitions', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: roleArb, order: orderArb, status: fc.constantFrom(...RECIPIENT_STATUSES) }), { maxLength: 10 }),
        signingOrderArb,
        (specs, signingOrder) => {
          const r = baseRequest({
            status: 'SENT',
            signingOrder,
            recipients: specs.map((s, i) => recipient(`rcp_${i}`, s.role, s.order, s.status)),
          });
          const signers = r.recipients.filter((x) => x.role === 'signer');
          expect(allSignersSigned(r)).toBe(signers.length > 0 && signers.every((x) => x.status === 'SIGNED'));
          const waiting = signers.filter((x) => x.status !== 'SIGNED' && x.status !== 'DECLINED');
          const first = Math.min(...waiting.map((x) => x.order));
          const expected = signingOrder === 'parallel' ? waiting : waiting.filter((x) => x.order === first);
          expect(ids(signersDue(r))).toEqual(ids(expected));
        },
      ),
      { numRuns: 300 },
    );
  });
});
