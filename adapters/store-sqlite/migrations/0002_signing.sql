-- The signing workflow: the job queue, signing links, the evidence trail and the test mailbox.
-- Same conventions as 0001_init.sql.

-- The durable job queue. Not tenant-scoped (workers serve every tenant), but every job names its tenant.
-- A job is claimable while dead = 0, run_at has come and it is not leased (locked_until NULL or passed).
CREATE TABLE jobs (
  id           TEXT NOT NULL PRIMARY KEY,
  kind         TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  payload      TEXT NOT NULL, -- JSON object of strings
  run_at       TEXT NOT NULL,
  attempts     INTEGER NOT NULL,
  -- NULLs are distinct in a UNIQUE column, so jobs without a key never collide.
  dedupe_key   TEXT UNIQUE,
  created_at   TEXT NOT NULL,
  last_error   TEXT,
  locked_by    TEXT,
  locked_until TEXT,
  -- Buried: kept for inspection with its last error, never claimed again.
  dead         INTEGER NOT NULL DEFAULT 0 CHECK (dead IN (0, 1))
) STRICT;
-- The claim walks live jobs in (run_at, id) order and stops after `limit` matches; buried jobs, which
-- only accumulate, stay out of the index.
CREATE INDEX jobs_claim ON jobs (run_at, id) WHERE dead = 0;

-- Only the SHA-256 of a link's token is stored; the token is the credential, so the lookup is unscoped.
CREATE TABLE signing_links (
  token_hash   TEXT NOT NULL PRIMARY KEY,
  org_id       TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT
) STRICT;

-- Append-only; read back one request at a time, in (at, id) order.
CREATE TABLE evidence (
  id           TEXT NOT NULL PRIMARY KEY,
  org_id       TEXT NOT NULL,
  mode         TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   TEXT NOT NULL,
  recipient_id TEXT,
  action       TEXT NOT NULL,
  at           TEXT NOT NULL,
  ip           TEXT,
  user_agent   TEXT,
  details      TEXT NOT NULL -- JSON object of strings
) STRICT;
CREATE INDEX evidence_by_request ON evidence (org_id, mode, request_id, at, id);

-- Test-mode mail kept instead of sent, paged like every other list.
CREATE TABLE test_mailbox (
  id         TEXT NOT NULL PRIMARY KEY,
  org_id     TEXT NOT NULL,
  mode       TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  to_address TEXT NOT NULL,
  subject    TEXT NOT NULL,
  text       TEXT NOT NULL,
  html       TEXT NOT NULL,
  message_id TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX test_mailbox_page ON test_mailbox (org_id, mode, created_at, id);
CREATE INDEX test_mailbox_page_by_to ON test_mailbox (org_id, mode, to_address, created_at, id);
