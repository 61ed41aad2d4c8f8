import * as fs from 'node:fs';

/**
 * How many SQLite statement journals (its deleted `etilqs_*` temporary files) this process has open: a
 * savepoint's page copies move to one past 64 KiB. Linux only (`/proc/self/fd`).
 */
export const openJournals = (): number =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).includes('etilqs_');
    } catch {
      return false;
    }
  }).length;
