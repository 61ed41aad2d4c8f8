import { describe, expect, it } from 'vitest';
import { notifiedKinds } from '../src/database.js';

// A NOTIFY on the jobs channel names the job's kind. Waking too many workers costs a claim; waking too few
// leaves a job until the next poll, so anything that is not a known kind wakes them all.
describe('the kinds a job NOTIFY names', () => {
  it('are the payload when it is a job kind, and any kind otherwise (a reconnect, a newer version)', () => {
    expect(notifiedKinds('webhook.deliver')).toEqual(new Set(['webhook.deliver']));
    expect(notifiedKinds('mail.invite')).toEqual(new Set(['mail.invite']));
    expect(notifiedKinds('')).toBe('any');
    expect(notifiedKinds('mail.digest')).toBe('any');
  });
});
