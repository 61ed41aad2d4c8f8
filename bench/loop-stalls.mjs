/**
 * Preloaded into each esig server by `npm run bench:api -- --stalls` (`node --import`): records when the
 * server's event loop stalled and when the garbage collector paused it, so that a p99 can be traced to its
 * cause. A timer due every millisecond notes each gap of more than `STALL_MS` between its runs (whatever held
 * the loop: a long synchronous call, a GC pause, the process descheduled on a busy machine); a
 * PerformanceObserver notes every GC pause. Times are wall-clock milliseconds (Date.now()'s scale), so the
 * bench can pick out the stretch of a run. Written to ESIG_BENCH_STALLS_OUT when the server is told to stop
 * (SIGTERM). The timer wakes the server a thousand times a second: take throughput from runs without it.
 */
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const STALL_MS = 4;
const out = process.env.ESIG_BENCH_STALLS_OUT;
if (out) {
  const wall = (t) => performance.timeOrigin + t;
  const stalls = [];
  const gcs = [];
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > STALL_MS) stalls.push({ at: wall(last), ms: now - last });
    last = now;
  }, 1).unref();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ at: wall(e.startTime), ms: e.duration, kind: e.detail?.kind });
  }).observe({ entryTypes: ['gc'] });
  process.once('SIGTERM', () => {
    writeFileSync(out, JSON.stringify({ stalls, gcs }));
    // The server's own SIGTERM handling (its graceful stop) runs on the signal sent again.
    process.kill(process.pid, 'SIGTERM');
  });
}
