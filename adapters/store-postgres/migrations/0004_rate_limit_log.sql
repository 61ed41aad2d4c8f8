-- The shared rate limiter's sliding-window log, reworked so that one call costs one round trip and O(1)
-- rows, whatever the limit. The previous layout kept each bucket's whole log in one bigint[] that every
-- call read, rewrote (TOASTed once it grew past a few hundred entries) and sent over the wire, holding
-- the bucket's row lock across four round trips; one busy organization was serialized to ~60 calls/s.
--
-- UNLOGGED: rate-limit counts are worth less than a WAL flush per API call. A transaction that writes only
-- unlogged tables commits without waiting for the disk, and a crash empties them: after a crash every
-- client briefly gets a fresh window, which is the only thing lost. (Standbys do not see these tables; a
-- promoted standby also starts with fresh windows.)
DROP TABLE rate_limit_windows;

-- One row per bucket: the lock that serializes its decisions, and where its log stands.
CREATE UNLOGGED TABLE rate_limit_buckets (
  bucket    text COLLATE "C" NOT NULL PRIMARY KEY,
  -- The position the next admitted call takes in rate_limit_hits.
  next_seq  bigint NOT NULL DEFAULT 0,
  -- The newest admitted call, in ms since the epoch (NULL before the first): a decision's time never goes
  -- below it, so the log stays in time order even when a caller's clock reading is older.
  newest_ms bigint
);

-- One row per admitted call still in (or just out of) its window. Times never decrease along `seq`, so the
-- calls that left the window are always a prefix of a bucket's rows: found and deleted by a primary-key
-- range scan, each row once.
CREATE UNLOGGED TABLE rate_limit_hits (
  bucket text COLLATE "C" NOT NULL,
  seq    bigint NOT NULL,
  at_ms  bigint NOT NULL,
  PRIMARY KEY (bucket, seq)
);

-- Decides one call over several buckets and records it in all of them or in none, in one statement: the
-- buckets' row locks are held only while the server runs this, never across a client round trip.
--
-- p_buckets: distinct bucket ids, in an order every caller uses (locks are taken in it, so two callers
--            with overlapping buckets cannot deadlock); p_limits: each bucket's limit;
-- p_now_ms:  the caller's time, or NULL for the database's clock (read once every lock is held).
--
-- Per bucket it returns: `used`, the calls in the window before this one; `oldest_ms`, the oldest of them
-- (NULL when none); `must_expire_ms`, when the bucket is full, the call that has to leave the window before
-- another fits; with `allowed` (the whole call's verdict) and `now_ms` (the time decided at).
CREATE FUNCTION esig_rate_limit_consume(p_buckets text[], p_limits integer[], p_window_ms bigint, p_now_ms bigint)
RETURNS TABLE (bucket text, used bigint, oldest_ms bigint, must_expire_ms bigint, allowed boolean, now_ms bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n       integer := coalesce(cardinality(p_buckets), 0);
  nexts   bigint[] := '{}';
  firsts  bigint[] := '{}';
  oldests bigint[] := '{}';
  musts   bigint[] := '{}';
  newest  bigint;
  t       bigint;
  m       bigint;
  created integer;
  ok      boolean := true;
  r       record;
  h       record;
BEGIN
  FOR i IN 1 .. n LOOP
    SELECT w.next_seq, w.newest_ms INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
    IF NOT FOUND THEN
      -- A waiting insert of the same bucket by another caller resolves once that caller commits; then the
      -- row exists and is locked below. Creating in lock order keeps the no-deadlock argument intact.
      INSERT INTO rate_limit_buckets AS w (bucket) VALUES (p_buckets[i]) ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS created = ROW_COUNT;
      SELECT w.next_seq, w.newest_ms INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
      IF NOT FOUND THEN
        -- Swept between the two statements: the caller retries the whole call.
        RAISE EXCEPTION 'rate limit bucket % vanished while being locked', p_buckets[i] USING ERRCODE = '40001';
      END IF;
      -- The row this call created starts a new log. A sweep that removed the previous row may have missed
      -- a call recorded just before it (its snapshot predates the call); such leftovers would collide with
      -- this log's seqs. (When another caller created the row, its log is live: leave it.)
      IF created > 0 THEN
        DELETE FROM rate_limit_hits x WHERE x.bucket = p_buckets[i];
      END IF;
    END IF;
    nexts[i] := r.next_seq;
    newest := greatest(newest, r.newest_ms);
  END LOOP;

  t := greatest(coalesce(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), newest);

  FOR i IN 1 .. n LOOP
    SELECT x.seq, x.at_ms INTO h FROM rate_limit_hits x
      WHERE x.bucket = p_buckets[i] AND x.at_ms > t - p_window_ms ORDER BY x.seq LIMIT 1;
    IF FOUND THEN
      firsts[i] := h.seq;
      oldests[i] := h.at_ms;
    ELSE
      firsts[i] := nexts[i];
      oldests[i] := NULL;
    END IF;
    DELETE FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq < firsts[i];
    IF nexts[i] - firsts[i] >= p_limits[i] THEN
      ok := false;
      SELECT x.at_ms INTO m FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq = nexts[i] - p_limits[i];
      musts[i] := m;
    END IF;
  END LOOP;

  IF ok THEN
    FOR i IN 1 .. n LOOP
      INSERT INTO rate_limit_hits (bucket, seq, at_ms) VALUES (p_buckets[i], nexts[i], t);
      UPDATE rate_limit_buckets w SET next_seq = nexts[i] + 1, newest_ms = t WHERE w.bucket = p_buckets[i];
    END LOOP;
  END IF;

  RETURN QUERY SELECT p_buckets[i], nexts[i] - firsts[i], oldests[i], musts[i], ok, t FROM generate_subscripts(p_buckets, 1) AS i;
END;
$$;

-- Forgets buckets idle for a whole window (nothing of theirs still counts), with their rows. Skips rows a
-- caller holds, so it never waits for or deadlocks with a decision; returns how many buckets it removed.
CREATE FUNCTION esig_rate_limit_sweep(p_cutoff_ms bigint) RETURNS bigint
LANGUAGE sql AS $$
  WITH gone AS (
    DELETE FROM rate_limit_buckets w
    WHERE w.bucket IN (SELECT v.bucket FROM rate_limit_buckets v WHERE v.newest_ms IS NULL OR v.newest_ms <= p_cutoff_ms FOR UPDATE SKIP LOCKED)
    RETURNING w.bucket
  ), hits AS (
    DELETE FROM rate_limit_hits x USING gone WHERE x.bucket = gone.bucket
  )
  SELECT count(*) FROM gone;
$$;
