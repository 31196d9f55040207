-- A scratch row /readyz writes and deletes while the file could not be
-- written (full disk, read-only), to learn when writes work again.
CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY, pad BLOB NOT NULL);
