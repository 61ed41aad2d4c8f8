/**
 * How many names and references pdf-lib keeps on this thread. pdf-lib interns every `PDFName` and `PDFRef` it
 * ever makes in a module-level Map, for the life of the thread, so that its objects can be compared by identity.
 * Nothing ever leaves those Maps: every distinct name and object number of every file a thread has read stays.
 * Two uploads full of distinct names filled them to V8's limit of 2^24 entries (an attacker's review), and from
 * then on every task on that thread failed (a signer's typed signature was refused as "cannot be stamped") until
 * the thread had been idle for a minute, which under steady traffic it never is. The pool replaces a thread whose
 * tables pass a limit (`maxInternedNames`), after its task.
 *
 * pdf-lib exposes neither Map. Each is found once, by watching which Map `PDFName.of` and `PDFRef.of` insert a
 * new entry into; if a version of pdf-lib does that differently, nothing is found and the count is 0 (threads
 * are then kept as before; a test holds the pinned version to being counted).
 */
import { PDFName, PDFRef } from 'pdf-lib';

/** The Map a call inserts its first new entry into, and that entry's key (taken out again: it was only a probe). */
const tableFilledBy = (make: () => object): Map<unknown, unknown> | undefined => {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below, called with its receiver
  const set = Map.prototype.set;
  let found: { table: Map<unknown, unknown>; key: unknown } | undefined;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    found ??= { table: this, key };
    return set.call(this, key, value);
  };
  let made: object;
  try {
    made = make();
  } finally {
    Map.prototype.set = set;
  }
  if (found === undefined || found.table.get(found.key) !== made) return undefined;
  found.table.delete(found.key);
  return found.table;
};

// Keys no file names: a name pdf-lib decodes to itself, and the largest object number a PDF may use with the
// largest generation.
const tables = [
  tableFilledBy(() => PDFName.of(`EsigInternProbe${process.pid}x${Date.now()}`)),
  tableFilledBy(() => PDFRef.of(8_388_607, 65_535)),
].filter((t): t is Map<unknown, unknown> => t !== undefined);

/** Entries in pdf-lib's name and reference tables on this thread now (0 when they could not be found). */
export const internedEntries = (): number => tables.reduce((n, t) => n + t.size, 0);

/** Whether both tables were found (a test holds the pinned pdf-lib to it). */
export const internedTablesFound = (): boolean => tables.length === 2;
