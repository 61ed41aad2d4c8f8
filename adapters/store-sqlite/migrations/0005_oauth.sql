-- The OAuth 2.1 authorization server of the tool-protocol server: registered clients, authorization codes,
-- grants and their tokens. Codes and tokens are stored only as SHA-256 hashes. Clients identified by a
-- metadata document URL are fetched when needed and never stored here.
CREATE TABLE oauth_clients (
  id            TEXT NOT NULL PRIMARY KEY,
  name          TEXT NOT NULL,
  redirect_uris TEXT NOT NULL, -- JSON array
  kind          TEXT NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
  created_at    TEXT NOT NULL
) STRICT;

CREATE TABLE oauth_codes (
  code_hash      TEXT NOT NULL PRIMARY KEY,
  client_id      TEXT NOT NULL,
  redirect_uri   TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource       TEXT NOT NULL,
  scopes         TEXT NOT NULL, -- JSON array
  org_id         TEXT NOT NULL,
  mode           TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key_id         TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  expires_at     TEXT NOT NULL,
  used_at        TEXT,
  grant_id       TEXT
) STRICT;

CREATE TABLE oauth_grants (
  id          TEXT NOT NULL PRIMARY KEY,
  org_id      TEXT NOT NULL,
  mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key_id      TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  client_name TEXT NOT NULL,
  scopes      TEXT NOT NULL, -- JSON array
  resource    TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
) STRICT;
CREATE INDEX oauth_grants_page ON oauth_grants (org_id, mode, created_at, id);
CREATE INDEX oauth_grants_by_key ON oauth_grants (key_id);

CREATE TABLE oauth_tokens (
  token_hash TEXT NOT NULL PRIMARY KEY,
  grant_id   TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at TEXT NOT NULL,
  expires_at TEXT,
  spent_at   TEXT
) STRICT;
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);

-- A call made with an access token names its client in the request log (key_id = the consenting key).
ALTER TABLE api_log ADD COLUMN oauth_client_id TEXT;
