-- The initial schema, in step with the SQLite adapter's 0001 (same tables, same indexes). Conventions,
-- here and in every later migration:
-- * Every tenant-owned table carries org_id and mode, and every index that serves a tenant's query starts
--   with (org_id, mode), so a query never touches another tenant's rows.
-- * Timestamps are timestamptz. The ports speak ISO-8601 UTC text with milliseconds; the adapter refuses
--   to write any other spelling, so every stored value round-trips exactly.
-- * Identifiers compare with COLLATE "C" (byte order): keyset pages order by (created_at, id), and the
--   cursor a client holds must mean the same position whatever the database's default collation.
-- * Domain enums (statuses, event types) are checked by the adapter's row codecs, not by CHECK
--   constraints, as in the SQLite schema; only mode, which never changes, is checked here.
-- * JSON values (aggregates, event data, scopes) are jsonb.

CREATE TABLE orgs (
  id         text COLLATE "C" NOT NULL PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id          text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  name        text NOT NULL,
  prefix      text NOT NULL,
  -- Authentication looks keys up by hash across all tenants; UNIQUE also gives it its index.
  secret_hash text COLLATE "C" NOT NULL UNIQUE,
  scopes      jsonb NOT NULL, -- array of scope strings
  created_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX api_keys_page ON api_keys (org_id, mode, created_at, id);

CREATE TABLE documents (
  id                   text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id               text COLLATE "C" NOT NULL,
  mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
  name                 text NOT NULL,
  status               text NOT NULL,
  page_count           integer NOT NULL,
  size_bytes           bigint NOT NULL,
  sha256               text NOT NULL,
  signature_request_id text COLLATE "C",
  created_at           timestamptz NOT NULL
);
CREATE INDEX documents_page ON documents (org_id, mode, created_at, id);
CREATE INDEX documents_page_by_status ON documents (org_id, mode, status, created_at, id);
CREATE INDEX documents_by_request ON documents (org_id, mode, signature_request_id);

-- Bytes apart from metadata: listing documents must not drag megabytes of PDF through the buffer cache.
-- No foreign key to documents, because finished PDFs will be stored under other ids as well.
CREATE TABLE document_contents (
  org_id      text COLLATE "C" NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  document_id text COLLATE "C" NOT NULL,
  bytes       bytea NOT NULL,
  PRIMARY KEY (org_id, mode, document_id)
);

-- Whole aggregates as jsonb; status, created_at and version are copied out of it for filtering, paging
-- and the optimistic-concurrency check.
CREATE TABLE signature_requests (
  id         text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id     text COLLATE "C" NOT NULL,
  mode       text NOT NULL CHECK (mode IN ('test', 'live')),
  status     text NOT NULL,
  created_at timestamptz NOT NULL,
  version    integer NOT NULL,
  data       jsonb NOT NULL
);
CREATE INDEX signature_requests_page ON signature_requests (org_id, mode, created_at, id);
CREATE INDEX signature_requests_page_by_status ON signature_requests (org_id, mode, status, created_at, id);

-- The outbox and event log. The primary key on id is what makes `request.completed:<request id>` unique.
CREATE TABLE events (
  id            text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id        text COLLATE "C" NOT NULL,
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  type          text NOT NULL,
  created_at    timestamptz NOT NULL,
  data          jsonb NOT NULL, -- object
  redelivery_of text COLLATE "C",
  -- Set by the webhook dispatcher once it has fanned the event out to deliveries.
  dispatched_at timestamptz
);
CREATE INDEX events_page ON events (org_id, mode, created_at, id);
CREATE INDEX events_page_by_type ON events (org_id, mode, type, created_at, id);
-- The dispatcher's work queue stays small however long the log grows.
CREATE INDEX events_undispatched ON events (created_at, id) WHERE dispatched_at IS NULL;

CREATE TABLE idempotency_keys (
  org_id       text COLLATE "C" NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  key          text COLLATE "C" NOT NULL,
  fingerprint  text NOT NULL,
  state        text NOT NULL,
  response     jsonb, -- {status, body, headers} once completed
  created_at   timestamptz NOT NULL,
  locked_until timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (org_id, mode, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- PostgreSQL only (SQLite deployments are one process and limit in memory): the sliding-window log of
-- every rate-limit bucket, shared by all processes. One row per bucket holds the admitted call times
-- (milliseconds since the epoch, ascending, at most `limit` of them); a consumer locks the rows of its
-- buckets, so concurrent calls are decided one after another.
CREATE TABLE rate_limit_windows (
  bucket text COLLATE "C" NOT NULL PRIMARY KEY,
  hits   bigint[] NOT NULL
);
