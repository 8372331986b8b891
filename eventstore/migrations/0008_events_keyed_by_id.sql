-- seq only orders the sequencer's queue of unsequenced events, which the
-- partial index events_unsequenced serves; no reader looks events up by
-- seq otherwise. Its primary-key index cost every append one index entry,
-- and the sequencer's update of every row another. The event id, unique
-- and never null, becomes the primary key instead. Rebuilding the id index
-- as the key holds writes to events for one index build (a second or two
-- per million events).
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events DROP CONSTRAINT events_id_key, ADD PRIMARY KEY (id);
