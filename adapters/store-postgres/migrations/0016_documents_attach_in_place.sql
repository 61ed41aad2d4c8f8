-- Linking a document to a request (the create-request's attach) changes `signature_request_id` only. With no index
-- holding that column, PostgreSQL writes the new row version beside the old one on its page, when the page has room,
-- and touches no index (a HOT update): the attach then costs about half what it did, when each of the table's four
-- indexes got a new entry (docs/performance.md, twenty-eighth and twenty-ninth rounds). A page full of uploads has
-- room once an earlier link's old row version on it has been pruned, which waits for every older transaction of the
-- cluster: documents linked soon after their upload are HOT nearly always, a backlog linked later less often. A link
-- that is not HOT still writes to three indexes instead of four.
--
-- documents_by_request served one statement, the status of a request's documents (at send, cancel, decline, expiry
-- and completion). Since the release before this one (be3a448) that statement finds them through the primary key, by
-- the ids the request lists (SET_STATUS_FOR_REQUEST_SQL in documents.ts), and nothing else reads this index.
-- Processes of older releases still find a request's documents through it: upgrade through that release first, or
-- replace every older process before the busy hours (docs/deployment.md).
--
-- Dropping an index needs the table alone: it waits for every transaction that has touched `documents`, and every
-- statement on the table waits behind it. So, as migration 15, it waits at most 2 s for that lock; past that it
-- fails, applies nothing, and the operator runs `esig migrate` again.
SET LOCAL lock_timeout = '2s';
DROP INDEX IF EXISTS documents_by_request;
