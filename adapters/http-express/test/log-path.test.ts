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

  it('in a request target of absolute form, after doubled slashes or dot segments, wherever such a segment comes', () => {
    expect(redactPath('http://localhost:3401/sign/SECRET')).toBe('http://localhost:3401/sign/{token}');
    expect(redactPath('HTTP://x/embed/SECRET')).toBe('HTTP://x/embed/{token}');
    expect(redactPath('http://h/api/v1/signing/SECRET/sign')).toBe('http://h/api/v1/signing/{token}/sign');
    expect(redactPath('//sign/SECRET')).toBe('//sign/{token}');
    expect(redactPath('/x/../sign/SECRET')).toBe('/x/../sign/{token}');
    expect(redactPath('/api/v1//signing/SECRET')).toBe('/api/v1//signing/{token}');
  });

  it('leaves other paths alone', () => {
    expect(redactPath('/api/v1/documents/doc_1')).toBe('/api/v1/documents/doc_1');
  });
});
