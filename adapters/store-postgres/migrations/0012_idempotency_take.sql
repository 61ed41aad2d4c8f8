-- An idempotency key taken for the length of one transaction, then its record read: what lets a new key's
-- claim, its command and its record share one transaction (one commit) instead of the claim committing on its
-- own first.
--
-- Taking the key is a transaction-level advisory lock tried without waiting, on a 64-bit hash of the tenant
-- and the key. A concurrent call with the same key finds it taken and is answered `409
-- idempotency_in_progress` at once, as CONTRACT.md says, without a claim row for it to see. The lock ends with
-- the transaction (commit, rollback, or a dropped connection), so a crashed caller leaves nothing that must
-- expire. Two different keys in flight at the same moment share a lock only if their hashes collide (one in
-- 2^64): one of them is then answered 409 and retried. The record's primary key, not this lock, is what keeps
-- a command from committing twice: the lock only spares a duplicate the work of running it.
--
-- The record is read after the lock is had, by a statement of its own: in a VOLATILE function each statement
-- takes a new snapshot (READ COMMITTED), so a record committed by the transaction that held the key just
-- before is seen. Read in the same statement as the lock, with the snapshot taken before it, it could be missed.
--
-- The separator is chr(31), which none of the three parts can hold (a key is printable ASCII; org ids and
-- modes are esig's own), so different (org, mode, key) give different texts to hash. The seed keeps these
-- hashes apart from any other use of hashtextextended; the two-part key space of advisory locks is not used,
-- and migrations lock the one-part key 0x657369670001, which a hash hits one time in 2^64.
CREATE FUNCTION esig_idempotency_take(p_org_id text, p_mode text, p_key text)
RETURNS TABLE (held boolean, org_id text, mode text, key text, fingerprint text, state text, response jsonb,
               created_at timestamptz, locked_until timestamptz, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended(p_org_id || chr(31) || p_mode || chr(31) || p_key, 6573696701)) THEN
    held := false;
    RETURN NEXT;
    RETURN;
  END IF;
  RETURN QUERY
    SELECT true, k.org_id, k.mode, k.key, k.fingerprint, k.state, k.response, k.created_at, k.locked_until, k.expires_at
    FROM idempotency_keys k
    WHERE k.org_id = p_org_id AND k.mode = p_mode AND k.key = p_key;
  IF NOT FOUND THEN
    held := true;
    RETURN NEXT;
  END IF;
END
$$;
