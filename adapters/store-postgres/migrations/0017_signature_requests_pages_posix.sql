-- The signature requests' page indexes hold `id` in collation "POSIX", as the documents' do since migration 15 (see
-- there): both "C" and "POSIX" order by bytes, so a page is the same rows in the same order, and the pages compare and
-- sort `id COLLATE "POSIX"` (keyset.ts). Then only the primary key can serve `id = $1`, and a request by id (read, or
-- locked for a change: every call of the signing flow, every send, cancel and job) keeps a generic plan without the
-- fence of by-id.ts, instead of being planned at every call (about 100 µs of a backend: docs/performance.md,
-- twenty-ninth round).
--
-- Built under new names, then renamed. Building holds the table against writes (new requests, recipients, fields,
-- sends and signatures wait; reads go on), 6–9 s per million requests in memory; dropping the old indexes waits for
-- every transaction that has touched the table. So it waits at most 2 s for a lock: past that it fails, applies
-- nothing, and the operator runs `esig migrate` again (so too when it deadlocks with a change of a request).
SET LOCAL lock_timeout = '2s';
CREATE INDEX signature_requests_page_posix ON signature_requests (org_id, mode, created_at, id COLLATE "POSIX");
CREATE INDEX signature_requests_page_by_status_posix ON signature_requests (org_id, mode, status, created_at, id COLLATE "POSIX");
DROP INDEX signature_requests_page;
DROP INDEX signature_requests_page_by_status;
ALTER INDEX signature_requests_page_posix RENAME TO signature_requests_page;
ALTER INDEX signature_requests_page_by_status_posix RENAME TO signature_requests_page_by_status;
-- A process of the release before this one still sorts its pages by `id` in the column's collation, which these
-- indexes serve only up to `created_at`: with statistics from before a tenant grew, its planner sorted the rest of
-- the tenant for each later page (164 ms at 100,000 requests), with fresh ones an incremental sort of a few rows.
-- Only a table with rows is analyzed: a new database's stays as it was, never analyzed, until autovacuum sees it grow
-- (analyzed empty, the lookups by id are planned at every call until then; plan-cache.test.ts).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM signature_requests) THEN
    ANALYZE signature_requests;
  END IF;
END $$;
