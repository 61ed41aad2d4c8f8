-- Embedded signing sessions (CONTRACT: "Embedded signing"): one-time, origin-bound. Only the SHA-256 of
-- the token is kept; the token is the credential, so the lookup is by hash across tenants.
CREATE TABLE embed_sessions (
  id           TEXT NOT NULL UNIQUE,
  token_hash   TEXT NOT NULL PRIMARY KEY,
  org_id       TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  origin       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  used_at      TEXT
) STRICT;
