import { describe, expect, it } from 'vitest';
import type { Credential, DomainError } from '@esig/core';
import {
  concurrentModification,
  credentialId,
  describeError,
  idempotencyInProgress,
  idempotencyKeyReused,
  insufficientScope,
  invalidDocument,
  invalidState,
  keyIdOf,
  mailUnavailable,
  notFound,
  rateLimited,
  storeFailure,
  unauthenticated,
  validationFailed,
} from '@esig/core';

describe('describeError', () => {
  const every: DomainError[] = [
    validationFailed([{ path: 'title', message: 'must not be empty' }], 'title must not be empty.'),
    unauthenticated('The API key is unknown or revoked.'),
    insufficientScope('webhooks:write'),
    notFound('signature_request', 'req_1'),
    invalidState('The request was already sent.'),
    idempotencyInProgress(),
    idempotencyKeyReused(),
    invalidDocument('The PDF has no pages.'),
    rateLimited(7),
    mailUnavailable('The code could not be sent.', '421 4.3.2 service not available'),
    storeFailure(new Error('password=hunter2 at db:5432')),
    concurrentModification('signature_request', 'req_1'),
  ];

  it('gives every domain error a sentence a person can read', () => {
    for (const e of every) expect(describeError(e), e._tag).toMatch(/^\S.*\.$/);
    expect(describeError(insufficientScope('webhooks:write'))).toContain('webhooks:write');
    expect(describeError(notFound('signature_request', 'req_1'))).toBe('No signature request req_1.');
    expect(describeError(rateLimited(7))).toContain('7 s');
  });

  it('never shows the cause of a store failure', () => {
    expect(describeError(storeFailure(new Error('password=hunter2 at db:5432')))).not.toMatch(/hunter2|5432/);
  });
});

describe('credentials', () => {
  it('names each kind of credential distinctly, a grant by its grant (tokens rotate), and knows the key behind it', () => {
    const key: Credential = { kind: 'api_key', keyId: 'key_1' };
    const token: Credential = { kind: 'access_token', keyId: 'key_1', clientId: 'cli_1', grantId: 'grt_1' };
    const mine: Credential = { kind: 'external', id: 'key_1' };
    expect(new Set([key, token, mine].map(credentialId)).size).toBe(3);
    expect(credentialId({ ...token, clientId: 'cli_2' })).toBe(credentialId(token));
    expect([key, token, mine].map(keyIdOf)).toEqual(['key_1', 'key_1', null]);
  });
});

describe('validationFailed', () => {
  it('names the first problem when no detail is given', () => {
    expect(validationFailed([{ path: 'origin', message: 'must be an https origin' }, { path: 'x', message: 'y' }]).detail).toBe('origin must be an https origin.');
    expect(validationFailed([{ path: '(body)', message: 'could not be read' }]).detail).toBe('The body could not be read.');
    expect(validationFailed([]).detail).toBe('The request is not valid.');
    expect(validationFailed([{ path: 'title', message: 'must not be empty' }], 'Give the request a title.').detail).toBe('Give the request a title.');
  });
});
