-- Webhooks: endpoints, deliveries and the log of their attempts, and the request log. Same conventions as
-- 0001_init.sql.

-- One column per field of the endpoint. events and secrets are JSON arrays: read whole, never queried
-- inside except for the subscription test (json_each), which only ever runs over one tenant's endpoints.
CREATE TABLE webhook_endpoints (
  id                         TEXT NOT NULL PRIMARY KEY,
  org_id                     TEXT NOT NULL,
  mode                       TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  url                        TEXT NOT NULL,
  events                     TEXT NOT NULL, -- JSON array of event types
  description                TEXT,
  enabled                    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  disabled_reason            TEXT,
  disabled_at                TEXT,
  secrets                    TEXT NOT NULL, -- JSON array of {sealed, createdAt, retiresAt}, newest first
  consecutive_final_failures INTEGER NOT NULL,
  failing_since              TEXT,
  created_at                 TEXT NOT NULL,
  updated_at                 TEXT NOT NULL,
  version                    INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_page ON webhook_endpoints (org_id, mode, created_at, id);

-- One event on its way to one endpoint. The body is the exact bytes every attempt sends. Scheduling is
-- the job queue's; this row keeps the delivery's state.
CREATE TABLE webhook_deliveries (
  id              TEXT NOT NULL PRIMARY KEY,
  org_id          TEXT NOT NULL,
  mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  endpoint_id     TEXT NOT NULL,
  event_id        TEXT NOT NULL,
  event_type      TEXT NOT NULL,
  body            TEXT NOT NULL,
  status          TEXT NOT NULL,
  attempts        INTEGER NOT NULL,
  next_attempt_at TEXT,
  last_attempt_at TEXT,
  last_outcome    TEXT,
  created_at      TEXT NOT NULL,
  version         INTEGER NOT NULL
) STRICT;
-- Disabling or deleting an endpoint cancels its waiting deliveries; finished ones, which only
-- accumulate, stay out of the index.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (org_id, mode, endpoint_id) WHERE status = 'pending';

-- The delivery log: one row per attempt, append-only, paged by endpoint, by event or all together.
CREATE TABLE webhook_attempts (
  id            TEXT NOT NULL PRIMARY KEY,
  org_id        TEXT NOT NULL,
  mode          TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  delivery_id   TEXT NOT NULL,
  endpoint_id   TEXT NOT NULL,
  event_id      TEXT NOT NULL,
  event_type    TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  outcome       TEXT NOT NULL,
  succeeded     INTEGER NOT NULL CHECK (succeeded IN (0, 1)),
  duration_ms   INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_page ON webhook_attempts (org_id, mode, created_at, id);
CREATE INDEX webhook_attempts_page_by_endpoint ON webhook_attempts (org_id, mode, endpoint_id, created_at, id);
CREATE INDEX webhook_attempts_page_by_event ON webhook_attempts (org_id, mode, event_id, created_at, id);

-- The request log (API calls and webhook calls), append-only.
CREATE TABLE api_log (
  id          TEXT NOT NULL PRIMARY KEY,
  org_id      TEXT NOT NULL,
  mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  kind        TEXT NOT NULL,
  method      TEXT NOT NULL,
  target      TEXT NOT NULL, -- the API path, or the webhook URL
  status      INTEGER,       -- NULL when no HTTP answer came (a webhook timeout)
  outcome     TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  key_id      TEXT,
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX api_log_page ON api_log (org_id, mode, created_at, id);
CREATE INDEX api_log_page_by_kind ON api_log (org_id, mode, kind, created_at, id);
