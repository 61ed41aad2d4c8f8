// The thread entry when running from TypeScript sources: registers tsx's loader in this worker thread, then loads
// thread.ts. Hooks registered in the main thread (bin/esig.mjs, vitest) do not reach worker threads (see
// @esig/pdf-pdflib's worker-source.mjs). Compiled builds use thread.js.
import { register } from 'tsx/esm/api';

register();
await import('./thread.ts');
