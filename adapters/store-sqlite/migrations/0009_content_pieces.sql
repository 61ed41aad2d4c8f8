-- Content written ahead of its transaction (DocumentContentStore.stage), in pieces, each piece committed on
-- its own: storing a 15 MB upload in one INSERT, and committing its WAL frames, held the event loop ~80 ms.
-- A document_contents row with a staged_id names its pieces (its own bytes are then empty); rows from
-- before keep their bytes whole and staged_id NULL. Pieces no row names are removed by the purge (staged
-- and never put: a failed command, a crash), by staged_at.
CREATE TABLE content_pieces (
  org_id    TEXT NOT NULL,
  mode      TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  staged_id TEXT NOT NULL,
  seq       INTEGER NOT NULL CHECK (seq >= 0),
  bytes     BLOB NOT NULL,
  staged_at TEXT NOT NULL,
  PRIMARY KEY (org_id, mode, staged_id, seq)
) STRICT;
CREATE INDEX content_pieces_by_staged_at ON content_pieces (staged_at);

ALTER TABLE document_contents ADD COLUMN staged_id TEXT;
-- Whether a row names some pieces: asked by put (before deleting the pieces it replaced), discard and purge.
CREATE INDEX document_contents_by_staged_id ON document_contents (org_id, mode, staged_id) WHERE staged_id IS NOT NULL;
