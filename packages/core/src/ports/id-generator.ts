/** Identifier prefixes of CONTRACT.md ("Identifiers"), plus `org` for organizations. */
export type IdPrefix = 'oag' | 'ocl' | 'doc' | 'req' | 'rcp' | 'fld' | 'coc' | 'whe' | 'dlv' | 'key' | 'ses' | 'log' | 'evt' | 'org' | 'job' | 'mail';

/**
 * Makes resource ids: `<prefix>_` followed by 26 opaque characters (ULID-like: time-ordered, then random).
 * Every call returns a value never returned before.
 */
export interface IdGenerator {
  next(prefix: IdPrefix): string;
}
