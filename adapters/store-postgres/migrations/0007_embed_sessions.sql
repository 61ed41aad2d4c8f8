-- Embedded signing sessions, as the SQLite adapter's 0005: one-time, origin-bound, the token kept as its
-- SHA-256 only.
CREATE TABLE embed_sessions (
  id           text COLLATE "C" NOT NULL UNIQUE,
  token_hash   text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   text COLLATE "C" NOT NULL,
  recipient_id text COLLATE "C" NOT NULL,
  origin       text COLLATE "C" NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);
CREATE INDEX embed_sessions_by_request ON embed_sessions (org_id, mode, request_id);
