-- As the SQLite adapter's 0008_oauth_unused_clients.sql.
-- Registered OAuth clients that never reached consent are deleted after a while (purgeUnusedClients):
-- registration takes no credential, so without it anyone could fill the table. The purge finds the old
-- registered clients by creation time and asks, for each, whether a code or a grant names it.
CREATE INDEX IF NOT EXISTS oauth_clients_registered ON oauth_clients (created_at, id) WHERE kind = 'registered';
-- In collation "C": the purge compares client_id with oauth_clients.id, which is "C"; an index in the column's
-- default collation cannot serve that comparison.
CREATE INDEX IF NOT EXISTS oauth_codes_by_client ON oauth_codes (client_id COLLATE "C");
CREATE INDEX IF NOT EXISTS oauth_grants_by_client ON oauth_grants (client_id COLLATE "C");
