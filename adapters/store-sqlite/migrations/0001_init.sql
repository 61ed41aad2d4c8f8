-- The initial schema. Conventions, here and in every later migration:
-- * Every tenant-owned table carries org_id and mode, and every index that serves a tenant's query starts
--   with (org_id, mode), so a query never touches another tenant's rows.
-- * Timestamps are ISO-8601 UTC text with milliseconds ('2026-11-23T08:00:00.000Z'): they sort correctly
--   as text, which the keyset indexes on (created_at, id) rely on.
-- * Domain enums (statuses, event types) are checked by the adapter's row codecs, not by CHECK
--   constraints: changing a CHECK in SQLite means rebuilding the table. Only mode, which never changes,
--   is checked here.
-- * STRICT tables, so a wrong type is refused on write instead of stored and misread later.

CREATE TABLE orgs (
  id         TEXT NOT NULL PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id          TEXT NOT NULL PRIMARY KEY,
  org_id      TEXT NOT NULL,
  mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  name        TEXT NOT NULL,
  prefix      TEXT NOT NULL,
  -- Authentication looks keys up by hash across all tenants; UNIQUE also gives it its index.
  secret_hash TEXT NOT NULL UNIQUE,
  scopes      TEXT NOT NULL, -- JSON array of scope strings
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
) STRICT;
CREATE INDEX api_keys_page ON api_keys (org_id, mode, created_at, id);

CREATE TABLE documents (
  id                   TEXT NOT NULL PRIMARY KEY,
  org_id               TEXT NOT NULL,
  mode                 TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  name                 TEXT NOT NULL,
  status               TEXT NOT NULL,
  page_count           INTEGER NOT NULL,
  size_bytes           INTEGER NOT NULL,
  sha256               TEXT NOT NULL,
  signature_request_id TEXT,
  created_at           TEXT NOT NULL
) STRICT;
CREATE INDEX documents_page ON documents (org_id, mode, created_at, id);
CREATE INDEX documents_page_by_status ON documents (org_id, mode, status, created_at, id);
CREATE INDEX documents_by_request ON documents (org_id, mode, signature_request_id);

-- Bytes apart from metadata: listing documents must not drag megabytes of PDF through the page cache.
-- No foreign key to documents, because finished PDFs will be stored under other ids as well.
CREATE TABLE document_contents (
  org_id      TEXT NOT NULL,
  mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  document_id TEXT NOT NULL,
  bytes       BLOB NOT NULL,
  PRIMARY KEY (org_id, mode, document_id)
) STRICT;

-- Whole aggregates as JSON; status and created_at are copied out of it for filtering and paging.
CREATE TABLE signature_requests (
  id         TEXT NOT NULL PRIMARY KEY,
  org_id     TEXT NOT NULL,
  mode       TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  status     TEXT NOT NULL,
  created_at TEXT NOT NULL,
  version    INTEGER NOT NULL,
  data       TEXT NOT NULL
) STRICT;
CREATE INDEX signature_requests_page ON signature_requests (org_id, mode, created_at, id);
CREATE INDEX signature_requests_page_by_status ON signature_requests (org_id, mode, status, created_at, id);

-- The outbox and event log. The primary key on id is what makes `request.completed:<request id>` unique.
CREATE TABLE events (
  id            TEXT NOT NULL PRIMARY KEY,
  org_id        TEXT NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  type          TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  data          TEXT NOT NULL, -- JSON object
  redelivery_of TEXT,
  -- Set by the webhook dispatcher once it has fanned the event out to deliveries.
  dispatched_at TEXT
) STRICT;
CREATE INDEX events_page ON events (org_id, mode, created_at, id);
CREATE INDEX events_page_by_type ON events (org_id, mode, type, created_at, id);
-- The dispatcher's work queue stays small however long the log grows.
CREATE INDEX events_undispatched ON events (created_at, id) WHERE dispatched_at IS NULL;

CREATE TABLE idempotency_keys (
  org_id       TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key          TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  state        TEXT NOT NULL,
  response     TEXT, -- JSON {status, body, headers} once completed
  created_at   TEXT NOT NULL,
  locked_until TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  PRIMARY KEY (org_id, mode, key)
) STRICT;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
