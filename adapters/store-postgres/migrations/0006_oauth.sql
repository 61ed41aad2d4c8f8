-- As the SQLite adapter's 0005_oauth.sql.
-- The OAuth 2.1 authorization server of the tool-protocol server: registered clients, authorization codes,
-- grants and their tokens. Codes and tokens are stored only as SHA-256 hashes. Clients identified by a
-- metadata document URL are fetched when needed and never stored here.
CREATE TABLE oauth_clients (
  id            text COLLATE "C" NOT NULL PRIMARY KEY,
  name          TEXT NOT NULL,
  redirect_uris jsonb NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
  created_at    timestamptz NOT NULL
);

CREATE TABLE oauth_codes (
  code_hash      text COLLATE "C" NOT NULL PRIMARY KEY,
  client_id      TEXT NOT NULL,
  redirect_uri   TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource       TEXT NOT NULL,
  scopes         jsonb NOT NULL,
  org_id         TEXT NOT NULL,
  mode           TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key_id         TEXT NOT NULL,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL,
  used_at        timestamptz,
  grant_id       TEXT
);

CREATE TABLE oauth_grants (
  id          text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  key_id      TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  client_name TEXT NOT NULL,
  scopes      jsonb NOT NULL,
  resource    TEXT NOT NULL,
  created_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX oauth_grants_page ON oauth_grants (org_id, mode, created_at, id);
CREATE INDEX oauth_grants_by_key ON oauth_grants (key_id);

CREATE TABLE oauth_tokens (
  token_hash text COLLATE "C" NOT NULL PRIMARY KEY,
  grant_id   TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  spent_at   timestamptz
);
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);

-- A call made with an access token names its client in the request log (key_id = the consenting key).
ALTER TABLE api_log ADD COLUMN oauth_client_id TEXT;
