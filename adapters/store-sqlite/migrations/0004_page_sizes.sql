-- Each page's displayed size (points), recorded at upload so a field can be checked against its page.
-- A JSON array of {width, height}, one per page; NULL for documents uploaded before this migration, whose
-- fields are placed unchecked.
ALTER TABLE documents ADD COLUMN page_sizes TEXT;
