-- Registered OAuth clients that never reached consent are deleted after a while (purgeUnusedClients):
-- registration takes no credential, so without it anyone could fill the table. The purge finds the old
-- registered clients by creation time and asks, for each, whether a code or a grant names it.
CREATE INDEX IF NOT EXISTS oauth_clients_registered ON oauth_clients (created_at, id) WHERE kind = 'registered';
CREATE INDEX IF NOT EXISTS oauth_codes_by_client ON oauth_codes (client_id);
CREATE INDEX IF NOT EXISTS oauth_grants_by_client ON oauth_grants (client_id);
