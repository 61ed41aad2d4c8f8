-- The marker of the statements PostgreSQL must not run on a generic plan that scans a table (`plannedPerCall`
-- in connection.ts).
--
-- esig prepares its per-request statements, so that each connection parses them once. PostgreSQL then
-- plans a prepared statement for its values five times, and from the sixth call on keeps one generic plan
-- when that plan looks no dearer. A generic plan is made for the table's size at that moment and kept by
-- the connection until the table's statistics change. After an ANALYZE of a table of a few pages a
-- sequential scan is the cheaper plan even for one row by primary key; with autovacuum off or behind, the
-- connection then scanned the whole table at every call while the table grew (20,000 rows read for one
-- document by id, in the plan cache test).
--
-- A statement that must not run on such a plan adds `AND esig_planned_per_call($n)` with $n = 1. Planned for a
-- call's values, the call is IMMUTABLE with a constant argument: the planner runs it once, gets true and drops
-- the condition (a microsecond or two). In a generic plan the argument is unknown and the condition stays: on
-- a scan of a table its COST adds 2,500 of the planner's units (1,000,000 × cpu_operator_cost), where a lookup
-- by primary key costs 8, so PostgreSQL does not keep that plan. (It does not count the cost on an index scan,
-- so a generic plan that is one may still be kept.)
CREATE FUNCTION esig_planned_per_call(integer) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 1000000
AS $$ BEGIN RETURN true; END $$;

-- The PL/pgSQL functions plan their statements by the same rule, and keep those plans for the connection's life:
-- a probe of the rate limiter's buckets planned right after an ANALYZE of a few buckets read every bucket once
-- there were thousands (an attacker's review: 4,007 rows for one call, against 4). They plan at every call.
ALTER FUNCTION esig_rate_limit_consume_many(text[], integer[], bigint, bigint, integer) SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION esig_jobs_claim(text[], timestamptz, text, timestamptz, integer) SET plan_cache_mode = force_custom_plan;
ALTER FUNCTION esig_jobs_next_run_at(text[]) SET plan_cache_mode = force_custom_plan;
