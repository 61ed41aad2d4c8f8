-- For writes sent without waiting for their answer (a transaction run with `deferWrites`): a write whose
-- failure is "not the rows it should have changed" (a stale version, a document linked elsewhere, a record
-- gone) raises instead of answering with a count. PostgreSQL then refuses what follows it and rolls back at
-- the COMMIT, so the COMMIT can go out behind the writes without waiting for their answers either.
-- SQLSTATE EW001 (esig, wrong row count) is read by the store as ConcurrentModification.
CREATE FUNCTION esig_expect_rows(p_changed bigint, p_expected bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF p_changed IS DISTINCT FROM p_expected THEN
    RAISE EXCEPTION 'changed % rows where % were expected', p_changed, p_expected USING ERRCODE = 'EW001';
  END IF;
END;
$$;
