-- append_events and append_events_at_head (migrations 0003, 0005, 0007)
-- were called by processes built before Append and AppendAtHead inserted
-- their events with plain SQL (eventstore/store.go, append_at_head.go).
-- Nothing calls them now, and the Go code no longer recognises the errors
-- they raised (LV409, LV404): such processes must be stopped before this
-- migration runs (docs/operations.md, Upgrading).
DROP FUNCTION IF EXISTS append_events(uuid, text, uuid, integer, timestamptz,
    uuid[], integer[], text[], integer[], jsonb[], jsonb[]);
DROP FUNCTION IF EXISTS append_events_at_head(uuid, text, uuid, timestamptz,
    uuid[], text[], integer[], jsonb[], jsonb[]);
