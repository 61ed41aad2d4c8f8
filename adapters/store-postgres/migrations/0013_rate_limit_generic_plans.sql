-- The rate limiter's function keeps its statements' plans again, with sequential scans taken off them.
--
-- Migration 0012 made `esig_rate_limit_consume_many` plan every statement at every call, because PL/pgSQL keeps
-- a generic plan made for the tables' size at that moment, and one made right after an ANALYZE of a few
-- buckets read every bucket once there were thousands. That planning cost more than running the statements:
-- 14–21 µs to plan each against 4–16 µs to run it, about 145 µs of a backend per call (pg_stat_statements
-- under `bench:api`), on every authenticated request.
--
-- Every statement of the function reaches its rows through a primary key: a bucket by `bucket`, a call of its
-- log by `(bucket, seq)` or a range of `seq`. A sequential scan is never the plan it needs; it is only the plan
-- a table analyzed while small makes look cheaper. With sequential scans off inside the function, the plan
-- PostgreSQL keeps is the primary key's whatever the tables held when analyzed, and it keeps one after five
-- calls, as it does for any statement.
ALTER FUNCTION esig_rate_limit_consume_many(text[], integer[], bigint, bigint, integer) RESET plan_cache_mode;
ALTER FUNCTION esig_rate_limit_consume_many(text[], integer[], bigint, bigint, integer) SET enable_seqscan = off;
