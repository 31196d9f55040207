-- 018: the store's epoch marker (store/contract/epoch.ts): an id written
-- once, and a count every replica raises when it looks. A file restored from
-- an older copy has a lower count than a replica saw: the data written since
-- is lost, and the replica says so.
CREATE TABLE IF NOT EXISTS epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch TEXT NOT NULL, seq INTEGER NOT NULL);
