-- Linking a document to a request (the create-request's attach) changes `signature_request_id` only. With no
-- index holding that column, and room left on the table's pages, PostgreSQL writes the new row version beside
-- the old one on its page and touches no index (a HOT update): the attach then costs about half what it did,
-- when each of the table's four indexes got a new entry (docs/performance.md, twenty-eighth round).
--
-- documents_by_request served one statement, the status of a request's documents (at send, cancel, decline,
-- expiry and completion); it now finds them through the primary key, by the ids the request lists
-- (SET_STATUS_FOR_REQUEST_SQL in documents.ts). The fill factor leaves a tenth of each new page free for such
-- updates; pages written before keep what room they have.
DROP INDEX IF EXISTS documents_by_request;
ALTER TABLE documents SET (fillfactor = 90);
