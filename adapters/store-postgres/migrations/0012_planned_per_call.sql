-- The marker of the statements PostgreSQL must plan at every call (`plannedPerCall` in connection.ts).
--
-- esig prepares its per-request statements, so that each connection parses them once. PostgreSQL then
-- plans a prepared statement for its values five times, and from the sixth call on keeps one generic plan
-- when that plan looks no dearer. A generic plan is made for the table's size at that moment and kept by
-- the connection until the table's statistics change. After an ANALYZE of a table of a few pages a
-- sequential scan is the cheaper plan even for one row by primary key; with autovacuum off or behind, the
-- connection then scanned the whole table at every call while the table grew (20,000 rows read for one
-- document by id, in the plan cache test).
--
-- A statement that must not run on a generic plan adds `AND esig_planned_per_call($n)` with $n = 1. Planned
-- for a call's values, the call is IMMUTABLE with a constant argument: the planner runs it once, gets true
-- and drops the condition (a microsecond or two). In a generic plan the argument is unknown, the condition
-- stays, and its COST prices that plan a million times dearer, so PostgreSQL never keeps it.
CREATE FUNCTION esig_planned_per_call(integer) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 1000000
AS $$ BEGIN RETURN true; END $$;
