-- The documents' page indexes hold `id` in collation "POSIX" rather than the column's "C" (both order by bytes,
-- so a page is the same rows in the same order), and the pages compare and sort `id COLLATE "POSIX"` (keyset.ts).
--
-- Why: an index serves a comparison only in its own collation. With `id` in "C" in these indexes, a lookup of a
-- document by id (`id = $1`, in "C") could be an index condition of either page index too, as a later column:
-- a walk of the whole index for the one entry. PostgreSQL chose such a walk for a generic plan made while the
-- table was small, and kept it as the table grew (docs/performance.md, twenty-third round), so every lookup of
-- documents by id was planned at every call instead. Now only the primary key can serve `id = …`; any other plan
-- reads rows and filters them, which `esig_planned_per_call` prices out (migration 0012), so the create-request's
-- lookup and attach of one document keep a generic plan (documents.ts).
--
-- Built under new names, then renamed: the pages have an index to use until the old ones go, in this transaction.
-- Building holds the table against writes (about 9 s per million documents); dropping needs it alone, and waits for
-- every transaction that has touched it, while every statement on it waits behind the drop. So the migration waits at
-- most 2 s for a lock, below the pool's 5 s: past that it fails, applies nothing, and `esig migrate` runs it again.
SET LOCAL lock_timeout = '2s';
CREATE INDEX documents_page_posix ON documents (org_id, mode, created_at, id COLLATE "POSIX");
CREATE INDEX documents_page_by_status_posix ON documents (org_id, mode, status, created_at, id COLLATE "POSIX");
DROP INDEX documents_page;
DROP INDEX documents_page_by_status;
ALTER INDEX documents_page_posix RENAME TO documents_page;
ALTER INDEX documents_page_by_status_posix RENAME TO documents_page_by_status;
