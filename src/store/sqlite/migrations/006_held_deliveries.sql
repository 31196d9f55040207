-- 006: deliveries a mute holds (1 while held, until released).
ALTER TABLE deliveries ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
