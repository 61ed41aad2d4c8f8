-- Linking a document to a request (the create-request's attach) changes `signature_request_id` only. With no index
-- holding that column, PostgreSQL writes the new row version beside the old one on its page, when the page has room,
-- and touches no index (a HOT update): the attach then costs about half what it did, when each of the table's four
-- indexes got a new entry (docs/performance.md, twenty-eighth and twenty-ninth rounds).
--
-- documents_by_request served one statement, the status of a request's documents (at send, cancel, decline, expiry
-- and completion). Since the release of migration 15 that statement finds them through the primary key, by the ids
-- the request lists (SET_STATUS_FOR_REQUEST_SQL in documents.ts), and nothing else reads this index. Processes of a
-- release before migration 15 still find a request's documents through it: upgrade through that release first, or
-- replace every older process before the busy hours (docs/deployment.md).
--
-- Dropping an index needs the table alone: it waits for every transaction that has touched `documents`, and every
-- statement on the table waits behind it. So, as migration 15, it waits at most 2 s for that lock; past that it
-- fails, applies nothing, and `esig migrate` runs it again.
SET LOCAL lock_timeout = '2s';
DROP INDEX IF EXISTS documents_by_request;
