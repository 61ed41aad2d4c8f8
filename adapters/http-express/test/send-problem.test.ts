import type { Response } from 'express';
import { mailUnavailable } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { faultOf, sendProblem } from '../src/send.js';

/** The little of express's Response that `sendProblem` uses, recording what it sent. */
const response = () => {
  const sent = { status: 0, body: '' };
  const res = {
    headersSent: false,
    locals: { requestId: 'log_01JD0000000000000000000000' },
    setHeader: () => res,
    status: (s: number) => ((sent.status = s), res),
    type: () => res,
    send: (b: string) => ((sent.body = b), res),
  };
  return { res: res as unknown as Response, sent };
};

describe('sendProblem', () => {
  it('answers a mail outage with a 503 that says nothing of the mail server, and keeps its cause for the log line', () => {
    const { res, sent } = response();
    const cause = 'ECONNECTION connect ECONNREFUSED 10.0.0.5:587';
    sendProblem(res, mailUnavailable('The code could not be sent just now; ask for a new one in a few minutes.', cause));
    expect(sent.status).toBe(503);
    expect(JSON.parse(sent.body)).toMatchObject({ code: 'mail_unavailable', detail: 'The code could not be sent just now; ask for a new one in a few minutes.' });
    expect(sent.body).not.toContain('10.0.0.5');
    expect(faultOf(res)).toEqual({ message: cause });
  });
});
