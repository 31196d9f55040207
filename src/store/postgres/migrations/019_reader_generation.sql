-- 019: the least layout generation a replica needs to read this schema
-- (store/contract/generation.ts). One row; each replica raises it to what
-- its writes need at start, and one that reads an older generation than
-- the row holds refuses to start instead of misreading the tables.

CREATE TABLE reader_generation (
  id integer PRIMARY KEY CHECK (id = 1),
  min_reader integer NOT NULL
);
