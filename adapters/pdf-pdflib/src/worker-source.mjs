// The worker entry when running from TypeScript sources: registers tsx's loader in this worker thread, then
// loads worker.ts. Hooks registered in the main thread (bin/esig.mjs, vitest) do not reach worker
// threads, and on Node 20 the hooks of an `--import tsx` given to a worker are not yet in place for its
// first import; registering here, before the dynamic import, is reliable. Compiled builds use worker.js.
import { register } from 'tsx/esm/api';

register();
export default (await import('./worker.ts')).default;
