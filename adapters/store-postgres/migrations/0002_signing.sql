-- Signing: the job queue, signing links, the evidence trail and the test mailbox, as the SQLite adapter's
-- 0002 (same tables, columns and indexes). Conventions as in 0001.

-- Not tenant-scoped: workers serve every tenant and read it from the job.
CREATE TABLE jobs (
  id          text COLLATE "C" NOT NULL PRIMARY KEY,
  kind        text NOT NULL,
  org_id      text COLLATE "C" NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  payload     jsonb NOT NULL, -- object of strings (identifiers only)
  run_at      timestamptz NOT NULL,
  attempts    integer NOT NULL DEFAULT 0,
  -- At most one job per key ever exists; NULLs do not collide.
  dedupe_key  text COLLATE "C" UNIQUE,
  created_at  timestamptz NOT NULL,
  last_error  text,
  -- The lease: who works on the job and until when. Both NULL when nobody does.
  locked_by    text,
  locked_until timestamptz,
  -- Buried: kept with its last error, never claimed again.
  dead        boolean NOT NULL DEFAULT false
);
-- Claiming walks the live jobs in run_at order; buried ones drop out of the index.
CREATE INDEX jobs_claim ON jobs (run_at, id) WHERE NOT dead;

-- The token is the credential: only its SHA-256 is kept, and it is the key.
CREATE TABLE signing_links (
  token_hash   text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   text COLLATE "C" NOT NULL,
  recipient_id text COLLATE "C" NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz
);
CREATE INDEX signing_links_by_request ON signing_links (org_id, mode, request_id);

-- Append-only audit trail; read a request at a time, in the order things happened.
CREATE TABLE evidence (
  id           text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  mode         text NOT NULL CHECK (mode IN ('test', 'live')),
  request_id   text COLLATE "C" NOT NULL,
  recipient_id text COLLATE "C",
  action       text NOT NULL,
  at           timestamptz NOT NULL,
  ip           text, -- as received (text, not inet, so it round-trips exactly)
  user_agent   text,
  details      jsonb NOT NULL -- object of strings
);
CREATE INDEX evidence_by_request ON evidence (org_id, mode, request_id, at, id);

CREATE TABLE test_mailbox (
  id         text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id     text COLLATE "C" NOT NULL,
  mode       text NOT NULL CHECK (mode IN ('test', 'live')),
  to_address text COLLATE "C" NOT NULL,
  subject    text NOT NULL,
  text       text NOT NULL,
  html       text NOT NULL,
  message_id text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX test_mailbox_page ON test_mailbox (org_id, mode, created_at, id);
CREATE INDEX test_mailbox_page_by_to ON test_mailbox (org_id, mode, to_address, created_at, id);
