-- Content is read in slices (READ_SLICE_BYTES in document-contents.ts), so that a large PDF's bytes are decoded on
-- the event loop a slice at a time. PostgreSQL serves `substring` of a value stored uncompressed out of line from
-- that slice's own TOAST chunks; of a compressed value, only after decompressing it whole, at every slice. PDFs are
-- mostly compressed streams already, which PostgreSQL stores uncompressed anyway; this makes it so for all of them.
-- Only values written from now on are stored this way: older ones read as before, each slice decompressing them.
--
-- A change to the catalog only (no rewrite), but it needs the table's lock: as migrations 15 to 17, it waits at most
-- 2 s for it; past that it fails, applies nothing, and the operator runs `esig migrate` again.
SET LOCAL lock_timeout = '2s';
ALTER TABLE document_contents ALTER COLUMN bytes SET STORAGE EXTERNAL;
