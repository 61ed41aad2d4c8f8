-- Each page's displayed size (points), as the SQLite adapter's 0004: a JSON array of {width, height}, one
-- per page; NULL for documents uploaded before this migration, whose fields are placed unchecked.
ALTER TABLE documents ADD COLUMN page_sizes jsonb;
