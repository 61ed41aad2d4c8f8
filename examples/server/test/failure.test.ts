import { describe, expect, it } from 'vitest';
import { describeFailure } from '../src/failure.js';

describe('describeFailure', () => {
  it('says an outside failure (one with a code) in its message, with a hint where there is one', () => {
    const taken = Object.assign(new Error('listen EADDRINUSE: address already in use 0.0.0.0:3000'), { code: 'EADDRINUSE' });
    expect(describeFailure(taken)).toBe('listen EADDRINUSE: address already in use 0.0.0.0:3000 (another process listens there: stop it, or choose another port with ESIG_PORT)');
    const login = Object.assign(new Error('password authentication failed for user "esig"'), { code: '28P01' });
    expect(describeFailure(login)).toBe('password authentication failed for user "esig"');
  });

  it("keeps the stack of esig's own faults, and says what was thrown when it is not an Error", () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
    expect(describeFailure(bug)).toBe(bug.stack);
    expect(describeFailure('gave up')).toBe('gave up');
  });
});
