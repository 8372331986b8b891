-- position is NULL until the sequencer assigns it, and a btree indexes
-- NULLs: every append put an entry into events_position_key that only told
-- the index where unsequenced rows were (events_unsequenced already does),
-- and the sequencer's update then added the real one. The unique index now
-- holds sequenced rows only: one index entry fewer per append. Every
-- reader by position asks for position > P, = P or IS NOT NULL, which
-- this partial index answers. Building it holds writes to events for the
-- duration of one index build (a second or two per million events).
ALTER TABLE events DROP CONSTRAINT events_position_key;
CREATE UNIQUE INDEX events_position ON events (position) WHERE position IS NOT NULL;
