-- Jobs are found by kind first. Each worker serves some kinds only (the server runs one for webhook
-- deliveries and one for the rest), and walking every live job in time order found a worker's jobs only
-- after stepping over every due job of the other kinds: a backlog of 100,000 deliveries made each claim of
-- the mail worker read 100,000 rows, on the write connection. Now a claim reads, for each of its kinds,
-- that kind's oldest jobs only.
DROP INDEX jobs_claim;
CREATE INDEX jobs_due ON jobs (kind, run_at, id) WHERE dead = 0;
-- The leased jobs, few at any time (those running, and those of a worker that died until they are taken
-- over): where the next lease to end is found without reading the jobs that wait.
CREATE INDEX jobs_leased ON jobs (kind, locked_until) WHERE dead = 0 AND locked_until IS NOT NULL;
