/**
 * Preloaded into the server by `npm run bench:api -- --allocations all|promoted` (`node --import`): V8's
 * sampling heap profiler over the server's whole life, its total written to ESIG_BENCH_ALLOCATIONS_OUT when the
 * server is told to stop (SIGTERM). `all` counts every sampled allocation, also those the collector has freed;
 * `promoted` leaves out what scavenges freed, so what it counts reached the old generation (or is still alive),
 * where only a mark-compact frees it. Bytes are estimates from samples taken every 4 KiB on average. The
 * profile itself goes to ESIG_BENCH_ALLOCATIONS_PROFILE when set (a `.heapprofile`).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const mode = process.env.ESIG_BENCH_ALLOCATIONS;
const out = process.env.ESIG_BENCH_ALLOCATIONS_OUT;
if ((mode === 'all' || mode === 'promoted') && out) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: mode === 'all' });
  const total = (node) => node.selfSize + node.children.reduce((n, c) => n + total(c), 0);
  process.once('SIGTERM', async () => {
    const { profile } = await post('HeapProfiler.stopSampling');
    writeFileSync(out, JSON.stringify({ mode, bytes: total(profile.head) }));
    // The samples by call stack, for Chrome DevTools (Memory, Load) or a script: where the bytes came from.
    if (process.env.ESIG_BENCH_ALLOCATIONS_PROFILE) writeFileSync(process.env.ESIG_BENCH_ALLOCATIONS_PROFILE, JSON.stringify(profile));
    // The server's own SIGTERM handling (its graceful stop) runs on the signal sent again.
    process.kill(process.pid, 'SIGTERM');
  });
}
