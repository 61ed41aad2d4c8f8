-- Finding a bucket's first call still in the window now costs a few primary-key lookups, however many calls
-- the window holds and whatever the table's statistics say. Before, one query found it: the bucket's rows
-- with `at_ms` past the window's start, ordered by `seq`, the first. Measured on the API bench (limits raised
-- so that a 60 s window holds thousands of calls), the two statements cost 0.6–1.7 ms of a backend per bucket
-- and statement together, a third of a create-request's backend time, for two reasons:
--   * with the table's statistics from when it was small (it is UNLOGGED and grows fast), the plan read every
--     row of the bucket into a sort (a bitmap scan, then top-N) instead of walking the index and stopping at
--     the first: O(calls in the window) per call;
--   * that query and the DELETE of the calls that had left both started at the bucket's lowest index entry,
--     through every row earlier calls had deleted and vacuum had not yet removed.
-- A bucket's row now keeps where its log starts (`first_seq`), and the log's seqs from there to `next_seq`
-- are contiguous (calls are appended at `next_seq`, and only a prefix is ever deleted), so the first call in
-- the window is found by probing seqs: the head, then 1, 3, 7, … past it, then a binary search between the
-- last probe that had left and the first that had not. Each probe is an equality on the whole primary key,
-- which no statistics turn into a scan. A call after which d calls left the window probes O(log d) rows:
-- one when none left, two when one did (the steady state of a full bucket).
--
-- Invariant, under the bucket's row lock: the bucket's log is exactly the seqs first_seq .. next_seq - 1.
ALTER TABLE rate_limit_buckets ADD COLUMN first_seq bigint NOT NULL DEFAULT 0;

-- Logs written before this migration start where their lowest row is. The table holds only buckets used
-- within the last window (the sweep removes the rest), so this is quick; rate-limit calls wait for it
-- behind the ALTER TABLE's lock. A call of a process still on the previous version that was queued behind
-- that lock can run the previous function's body after this commits: it deletes and appends without moving
-- `first_seq`, which can then lie below the log's lowest row. Its decision is right, and the next call's
-- first probe misses, so that call reads the log with the previous scan and moves the head (see below).
UPDATE rate_limit_buckets w
SET first_seq = coalesce((SELECT min(x.seq) FROM rate_limit_hits x WHERE x.bucket = w.bucket), w.next_seq);

-- Migration 0010's function, same signature and results; only the log's head is read and kept (marked
-- "head" below).
CREATE OR REPLACE FUNCTION esig_rate_limit_consume_many(p_buckets text[], p_limits integer[], p_window_ms bigint, p_now_ms bigint, p_count integer)
RETURNS TABLE (bucket text, used bigint, oldest_ms bigint, must_expire_ms bigint, admitted integer, now_ms bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n       integer := coalesce(cardinality(p_buckets), 0);
  nexts   bigint[] := '{}';
  heads   bigint[] := '{}';
  firsts  bigint[] := '{}';
  oldests bigint[] := '{}';
  musts   bigint[] := '{}';
  newest  bigint;
  t       bigint;
  k       bigint := greatest(p_count, 0);
  m       bigint;
  created integer;
  r       record;
  h       record;
  lo      bigint;
  hi      bigint;
  p       bigint;
  a       bigint;
  ahi     bigint;
  step    bigint;
  galloping boolean;
BEGIN
  FOR i IN 1 .. n LOOP
    IF p_limits[i] IS NULL THEN
      RAISE EXCEPTION 'rate limit bucket % has no limit', p_buckets[i] USING ERRCODE = '22004';
    END IF;
    SELECT w.next_seq, w.newest_ms, w.first_seq INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO rate_limit_buckets AS w (bucket) VALUES (p_buckets[i]) ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS created = ROW_COUNT;
      SELECT w.next_seq, w.newest_ms, w.first_seq INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'rate limit bucket % vanished while being locked', p_buckets[i] USING ERRCODE = '40001';
      END IF;
      -- A new row starts a new, empty log: leftovers of a swept one go (migration 0004).
      IF created > 0 THEN
        DELETE FROM rate_limit_hits x WHERE x.bucket = p_buckets[i];
      END IF;
    END IF;
    nexts[i] := r.next_seq;
    heads[i] := r.first_seq;
    newest := greatest(newest, r.newest_ms);
  END LOOP;

  t := greatest(coalesce(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), newest);

  FOR i IN 1 .. n LOOP
    -- head: the first seq from the head on whose call is still in the window (nexts[i] when none is),
    -- found by galloping then bisecting over lo .. hi: every seq below lo has left, hi is in the window
    -- (or is next_seq), and ahi is hi's time.
    lo := heads[i];
    hi := nexts[i];
    ahi := NULL;
    step := 1;
    galloping := true;
    WHILE lo < hi LOOP
      -- Both stay in lo .. hi - 1, so each probe narrows the range (a midpoint of hi would never end).
      p := CASE WHEN galloping THEN least(heads[i] + step - 1, hi - 1) ELSE lo + (hi - lo) / 2 END;
      SELECT x.at_ms INTO a FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq = p;
      IF NOT FOUND THEN
        -- Not a log this function wrote (rows deleted by hand?): the scan of migration 0010, slow but right.
        SELECT x.seq, x.at_ms INTO h FROM rate_limit_hits x
          WHERE x.bucket = p_buckets[i] AND x.seq >= heads[i] AND x.at_ms > t - p_window_ms ORDER BY x.seq LIMIT 1;
        hi := CASE WHEN FOUND THEN h.seq ELSE nexts[i] END;
        ahi := CASE WHEN FOUND THEN h.at_ms END;
        EXIT;
      END IF;
      IF a > t - p_window_ms THEN
        hi := p;
        ahi := a;
        galloping := false;
      ELSE
        lo := p + 1;
        step := step * 2;
      END IF;
    END LOOP;
    firsts[i] := hi;
    oldests[i] := ahi;
    -- head: only the calls that left since the last call, and no statement when none did.
    IF firsts[i] > heads[i] THEN
      DELETE FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq >= heads[i] AND x.seq < firsts[i];
    END IF;
    k := least(k, greatest(p_limits[i] - (nexts[i] - firsts[i]), 0));
  END LOOP;

  FOR i IN 1 .. n LOOP
    IF k > 0 THEN
      INSERT INTO rate_limit_hits (bucket, seq, at_ms) SELECT p_buckets[i], s, t FROM generate_series(nexts[i], nexts[i] + k - 1) AS s;
      UPDATE rate_limit_buckets w SET next_seq = nexts[i] + k, newest_ms = t, first_seq = firsts[i] WHERE w.bucket = p_buckets[i];
    ELSIF firsts[i] > heads[i] THEN
      -- head: a refused call records nothing, but the calls it found gone are gone.
      UPDATE rate_limit_buckets w SET first_seq = firsts[i] WHERE w.bucket = p_buckets[i];
    END IF;
  END LOOP;

  IF k < p_count THEN
    FOR i IN 1 .. n LOOP
      IF nexts[i] + k - firsts[i] >= p_limits[i] THEN
        SELECT x.at_ms INTO m FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq = nexts[i] + k - p_limits[i];
        musts[i] := m;
      END IF;
    END LOOP;
  END IF;

  RETURN QUERY SELECT p_buckets[i], nexts[i] - firsts[i], oldests[i], musts[i], k::integer, t FROM generate_subscripts(p_buckets, 1) AS i;
END;
$$;
