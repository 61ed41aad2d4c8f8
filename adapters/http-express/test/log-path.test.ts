import { describe, expect, it } from 'vitest';
import { redactPath } from '../src/log-path.js';

describe('redactPath: a signing token never reaches the log', () => {
  it('replaces the token segment of the signer API, the signing page and the embedded page', () => {
    expect(redactPath('/api/v1/signing/Abc123/sign')).toBe('/api/v1/signing/{token}/sign');
    expect(redactPath('/sign/Abc123')).toBe('/sign/{token}');
    expect(redactPath('/embed/Abc123')).toBe('/embed/{token}');
    expect(redactPath('/sign/assets/app.js')).toBe('/sign/assets/app.js');
  });

  it('whatever the letter case: Express routes /API/V1/SIGNING/… and /Sign/… to the same handlers', () => {
    expect(redactPath('/API/V1/SIGNING/Abc123')).toBe('/API/V1/SIGNING/{token}');
    expect(redactPath('/Sign/Abc123')).toBe('/Sign/{token}');
    expect(redactPath('/EMBED/Abc123/x')).toBe('/EMBED/{token}/x');
    expect(redactPath('/Sign/Assets/app.js')).toBe('/Sign/Assets/app.js');
  });

  it('leaves other paths alone', () => {
    expect(redactPath('/api/v1/documents/doc_1')).toBe('/api/v1/documents/doc_1');
  });
});
