-- 017: a delivery's Retry-After floor (ms, store clock; 0: none). A
-- receiver's Retry-After is kept here so that a re-fire's re-queue (and a
-- dead letter's retry) makes the delivery due no sooner than the receiver
-- asked.
ALTER TABLE deliveries ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
