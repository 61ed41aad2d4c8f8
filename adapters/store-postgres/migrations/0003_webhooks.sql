-- Webhooks: endpoints, deliveries and the log of their attempts, and the request log, as the SQLite
-- adapter's 0003 (same tables, columns and indexes). Conventions as in 0001.

-- One column per field of the endpoint. events and secrets are jsonb arrays: read whole, never queried
-- inside except for the subscription test (`events ? type`), which only runs over one tenant's endpoints.
CREATE TABLE webhook_endpoints (
  id                         text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id                     text COLLATE "C" NOT NULL,
  mode                       text NOT NULL CHECK (mode IN ('test', 'live')),
  url                        text NOT NULL,
  events                     jsonb NOT NULL, -- array of event types
  description                text,
  enabled                    boolean NOT NULL,
  disabled_reason            text,
  disabled_at                timestamptz,
  secrets                    jsonb NOT NULL, -- array of {sealed, createdAt, retiresAt}, newest first
  consecutive_final_failures integer NOT NULL,
  failing_since              timestamptz,
  created_at                 timestamptz NOT NULL,
  updated_at                 timestamptz NOT NULL,
  version                    integer NOT NULL
);
CREATE INDEX webhook_endpoints_page ON webhook_endpoints (org_id, mode, created_at, id);

-- One event on its way to one endpoint. The body is the exact bytes every attempt sends. Scheduling is
-- the job queue's; this row keeps the delivery's state.
CREATE TABLE webhook_deliveries (
  id              text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id          text COLLATE "C" NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('test', 'live')),
  endpoint_id     text COLLATE "C" NOT NULL,
  event_id        text COLLATE "C" NOT NULL,
  event_type      text NOT NULL,
  body            text NOT NULL,
  status          text NOT NULL,
  attempts        integer NOT NULL,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_outcome    text,
  created_at      timestamptz NOT NULL,
  version         integer NOT NULL
);
-- Disabling or deleting an endpoint cancels its waiting deliveries; finished ones, which only
-- accumulate, stay out of the index.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (org_id, mode, endpoint_id) WHERE status = 'pending';

-- The delivery log: one row per attempt, append-only, paged by endpoint, by event or all together.
CREATE TABLE webhook_attempts (
  id            text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id        text COLLATE "C" NOT NULL,
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  delivery_id   text COLLATE "C" NOT NULL,
  endpoint_id   text COLLATE "C" NOT NULL,
  event_id      text COLLATE "C" NOT NULL,
  event_type    text NOT NULL,
  attempt       integer NOT NULL,
  outcome       text NOT NULL,
  succeeded     boolean NOT NULL,
  duration_ms   integer NOT NULL,
  response_body text NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_page ON webhook_attempts (org_id, mode, created_at, id);
CREATE INDEX webhook_attempts_page_by_endpoint ON webhook_attempts (org_id, mode, endpoint_id, created_at, id);
CREATE INDEX webhook_attempts_page_by_event ON webhook_attempts (org_id, mode, event_id, created_at, id);

-- The request log (API calls and webhook calls), append-only.
CREATE TABLE api_log (
  id          text COLLATE "C" NOT NULL PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  kind        text NOT NULL,
  method      text NOT NULL,
  target      text NOT NULL, -- the API path, or the webhook URL
  status      integer,       -- NULL when no HTTP answer came (a webhook timeout)
  outcome     text NOT NULL,
  duration_ms integer NOT NULL,
  key_id      text COLLATE "C",
  created_at  timestamptz NOT NULL
);
CREATE INDEX api_log_page ON api_log (org_id, mode, created_at, id);
CREATE INDEX api_log_page_by_kind ON api_log (org_id, mode, kind, created_at, id);
