-- Several calls of one caller decided in one statement. A process sends at most one key admission per key
-- at a time; the calls that arrive while it is out go together in the next (see key-admission.ts). Every
-- bucket row is then locked once per batch instead of once per call, which is what a busy organization's
-- calls queued for.
--
-- p_count calls, decided in order at one time: the first `admitted` of them fit in every bucket and are
-- recorded (all at `now_ms`), the rest are refused and record nothing. `admitted` = the least room left
-- in any bucket, at most p_count. Per bucket it returns `used` and `oldest_ms` as they were before the
-- batch, and, when some call was refused and the bucket is full once the admitted ones are in, the call
-- that has to leave the window before another fits (`must_expire_ms`; it may be one of this batch's).
--
-- Locking, bucket creation and the log are those of migration 0004; the one-call function below is now
-- this one with p_count = 1, so there is one copy of the arithmetic.
CREATE FUNCTION esig_rate_limit_consume_many(p_buckets text[], p_limits integer[], p_window_ms bigint, p_now_ms bigint, p_count integer)
RETURNS TABLE (bucket text, used bigint, oldest_ms bigint, must_expire_ms bigint, admitted integer, now_ms bigint)
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
  k       bigint := greatest(p_count, 0);
  m       bigint;
  created integer;
  r       record;
  h       record;
BEGIN
  FOR i IN 1 .. n LOOP
    -- Migration 0004's function let a bucket with no limit through; nothing counts against no limit here.
    IF p_limits[i] IS NULL THEN
      RAISE EXCEPTION 'rate limit bucket % has no limit', p_buckets[i] USING ERRCODE = '22004';
    END IF;
    SELECT w.next_seq, w.newest_ms INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO rate_limit_buckets AS w (bucket) VALUES (p_buckets[i]) ON CONFLICT DO NOTHING;
      GET DIAGNOSTICS created = ROW_COUNT;
      SELECT w.next_seq, w.newest_ms INTO r FROM rate_limit_buckets w WHERE w.bucket = p_buckets[i] FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'rate limit bucket % vanished while being locked', p_buckets[i] USING ERRCODE = '40001';
      END IF;
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
    k := least(k, greatest(p_limits[i] - (nexts[i] - firsts[i]), 0));
  END LOOP;

  IF k > 0 THEN
    FOR i IN 1 .. n LOOP
      INSERT INTO rate_limit_hits (bucket, seq, at_ms) SELECT p_buckets[i], s, t FROM generate_series(nexts[i], nexts[i] + k - 1) AS s;
      UPDATE rate_limit_buckets w SET next_seq = nexts[i] + k, newest_ms = t WHERE w.bucket = p_buckets[i];
    END LOOP;
  END IF;

  IF k < p_count THEN
    FOR i IN 1 .. n LOOP
      -- Full once the admitted calls are in: the call `limit` places back from the end of the log.
      IF nexts[i] + k - firsts[i] >= p_limits[i] THEN
        SELECT x.at_ms INTO m FROM rate_limit_hits x WHERE x.bucket = p_buckets[i] AND x.seq = nexts[i] + k - p_limits[i];
        musts[i] := m;
      END IF;
    END LOOP;
  END IF;

  RETURN QUERY SELECT p_buckets[i], nexts[i] - firsts[i], oldests[i], musts[i], k::integer, t FROM generate_subscripts(p_buckets, 1) AS i;
END;
$$;

-- The one-call function of migration 0004, kept under its name and shape for callers that still use it.
CREATE OR REPLACE FUNCTION esig_rate_limit_consume(p_buckets text[], p_limits integer[], p_window_ms bigint, p_now_ms bigint)
RETURNS TABLE (bucket text, used bigint, oldest_ms bigint, must_expire_ms bigint, allowed boolean, now_ms bigint)
LANGUAGE sql AS $$
  SELECT c.bucket, c.used, c.oldest_ms, c.must_expire_ms, c.admitted = 1, c.now_ms
  FROM esig_rate_limit_consume_many(p_buckets, p_limits, p_window_ms, p_now_ms, 1) AS c;
$$;
