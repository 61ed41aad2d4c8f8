import type { FieldProblem } from '../../errors';
import type { AdoptedSignature } from '../../model/signature-request';

const PNG_DATA_URL = /^data:image\/png;base64,([A-Za-z0-9+/]+={0,2})$/;
const PNG_MAGIC = '\x89PNG\r\n\x1a\n';

/**
 * Refuses a signature the sealing step could not stamp: typed text of 1–200 characters, or a drawn PNG as
 * a data URL that really starts like a PNG. Checked when the signer signs, so a bad image can never leave
 * a completed request unsealable.
 */
export const checkAdoptedSignature = (s: AdoptedSignature): FieldProblem | null => {
  if (s.kind === 'typed') {
    const n = s.value.trim().length;
    return n >= 1 && n <= 200 ? null : { path: 'signature.value', message: 'a typed signature has 1 to 200 characters' };
  }
  const m = PNG_DATA_URL.exec(s.value);
  if (!m || m[1]!.length % 4 !== 0) return { path: 'signature.value', message: 'a drawn signature is a data:image/png;base64 URL' };
  let head: string;
  try {
    head = atob(m[1]!.slice(0, 12));
  } catch {
    return { path: 'signature.value', message: 'a drawn signature is a data:image/png;base64 URL' };
  }
  return head.startsWith(PNG_MAGIC) ? null : { path: 'signature.value', message: 'the drawn signature is not a PNG image' };
};
