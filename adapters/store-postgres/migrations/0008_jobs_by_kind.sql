-- Jobs are found by kind first, as the SQLite adapter's 0007. Each worker serves some kinds only (the server
-- runs one for webhook deliveries and one for the rest), and walking every live job in time order found a
-- worker's jobs only after stepping over every due job of the other kinds. Now a claim reads, for each of
-- its kinds, that kind's oldest jobs only.
--
-- This migration holds the jobs table while it builds the two indexes: about 2 s per million jobs in the
-- queue (a queue is usually far shorter; `esig jobs list` shows it). Writers wait for it, up to their
-- lock_timeout.
DROP INDEX jobs_claim;
CREATE INDEX jobs_due ON jobs (kind, run_at, id) WHERE NOT dead;
-- The leased jobs, few at any time (those running, and those of a worker that died until they are taken
-- over): where a kind's next lease to end is found without reading the jobs that wait.
CREATE INDEX jobs_leased ON jobs (kind, locked_until) WHERE NOT dead AND locked_until IS NOT NULL;

-- The claim and the next due time run in these functions for their planner settings. Without statistics
-- (a table never analyzed, or one whose backlog grew since), the planner takes `kind = …` for a handful of
-- rows, and reads and sorts a kind's whole range of jobs_due where reading it in order stops after `limit`
-- rows: every claim read the whole backlog. With bitmap scans and sorts priced out here, a kind's range is
-- read in order at any size. (The one sort left, of at most `limit` rows per kind, has no alternative.)
-- Those settings price the plans far above jit_above_cost, so JIT is off too: it compiled every claim,
-- 120 ms each, for a statement that reads a few rows.
-- plpgsql keeps each statement's plan for the session, where a SQL function with settings plans every call.

-- Leases up to p_limit claimable jobs of p_kinds (distinct), oldest run_at first: from each kind's range of
-- jobs_due its oldest p_limit, skipping rows another claimer has locked at this moment (so concurrent
-- claimers neither wait for nor share a job), then the oldest p_limit of those. Under READ COMMITTED a row
-- leased by a claimer that committed after this statement began is re-checked when locked, and drops out.
-- The rows a kind's range locked beyond those taken stay locked until the claim's transaction ends: at once
-- for a claim on its own, as the worker makes it; a claim inside a longer transaction keeps other claimers
-- off up to p_limit jobs of each of its other kinds until that transaction ends.
CREATE FUNCTION esig_jobs_claim(p_kinds text[], p_now timestamptz, p_worker text, p_lease timestamptz, p_limit integer)
RETURNS SETOF jobs
LANGUAGE plpgsql VOLATILE
SET enable_bitmapscan = off
SET enable_sort = off
SET jit = off
AS $$
BEGIN
  RETURN QUERY
  WITH due AS MATERIALIZED (
    SELECT j.id FROM unnest(p_kinds) AS k(kind)
    CROSS JOIN LATERAL (
      SELECT jobs.id, jobs.run_at FROM jobs
      WHERE NOT jobs.dead AND jobs.kind = k.kind AND jobs.run_at <= p_now
        AND (jobs.locked_until IS NULL OR jobs.locked_until <= p_now)
      ORDER BY jobs.run_at, jobs.id
      LIMIT p_limit
      FOR UPDATE SKIP LOCKED
    ) AS j
    ORDER BY j.run_at, j.id
    LIMIT p_limit
  ), leased AS (
    UPDATE jobs SET locked_by = p_worker, locked_until = p_lease, attempts = jobs.attempts + 1
    WHERE jobs.id IN (SELECT due.id FROM due)
    RETURNING jobs.*
  )
  SELECT * FROM leased;
END
$$;

-- The soonest time a job of p_kinds can be claimed. For each kind: its oldest unleased job (the first of its
-- range of jobs_due, past the few leased ones), and its leased jobs at their lease end (its range of
-- jobs_leased). LEAST ignores NULLs: a kind with jobs of one sort only still has that answer.
CREATE FUNCTION esig_jobs_next_run_at(p_kinds text[])
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET enable_bitmapscan = off
SET enable_sort = off
SET jit = off
AS $$
BEGIN
  RETURN (
    SELECT MIN(LEAST(w.run_at, l.lease_end))
    FROM unnest(p_kinds) AS k(kind)
    LEFT JOIN LATERAL (
      SELECT jobs.run_at FROM jobs
      WHERE NOT jobs.dead AND jobs.kind = k.kind AND jobs.locked_until IS NULL
      ORDER BY jobs.run_at, jobs.id LIMIT 1
    ) AS w ON true
    LEFT JOIN LATERAL (
      SELECT MIN(GREATEST(jobs.run_at, jobs.locked_until)) AS lease_end FROM jobs
      WHERE NOT jobs.dead AND jobs.kind = k.kind AND jobs.locked_until IS NOT NULL
    ) AS l ON true
  );
END
$$;
