-- 021: the store's epoch marker (store/contract/epoch.ts): an id written
-- once, and a count every replica raises when it looks. A database restored
-- from an older backup has a lower count than a replica saw: the data
-- written since is lost, and the replica says so.
CREATE TABLE IF NOT EXISTS epoch (id integer PRIMARY KEY CHECK (id = 1), epoch text NOT NULL, seq bigint NOT NULL);
