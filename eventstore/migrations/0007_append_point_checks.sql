-- The version checks of append_events and append_events_at_head asked
-- for max(stream_version) of the stream. Postgres may answer that by
-- aggregating every row of the stream instead of reading the index's last
-- entry, and a plpgsql function caches its plan: planned while the events
-- table was new and small, the aggregate was kept, and each append then
-- read the whole stream through the heap (measured: a third of the write
-- path's CPU on streams of a few thousand events). The checks below can
-- only be answered by a point lookup or a one-entry backward scan of
-- UNIQUE (stream_id, stream_version), whatever the table's statistics.

-- append_events: the stream is at p_expected exactly when version
-- p_expected exists (or p_expected is 0) and p_expected + 1 does not. The
-- first is checked here, in the insert itself (no row inserted: LV409);
-- the second is the unique index's: the insert of p_expected + 1 fails
-- with 23505, after waiting for a racing writer's commit if need be.
CREATE OR REPLACE FUNCTION append_events(
    p_tenant uuid, p_stream_type text, p_stream uuid, p_expected integer, p_recorded_at timestamptz,
    p_ids uuid[], p_versions integer[], p_types text[], p_schema_versions integer[], p_data jsonb[], p_metadata jsonb[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    inserted integer;
BEGIN
    INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
    SELECT r.id, p_tenant, p_stream_type, p_stream, r.version, r.type, r.schema_version, r.data, r.metadata, p_recorded_at
    FROM unnest(p_ids, p_versions, p_types, p_schema_versions, p_data, p_metadata)
         AS r(id, version, type, schema_version, data, metadata)
    WHERE p_expected = 0 OR EXISTS (SELECT 1 FROM events WHERE stream_id = p_stream AND stream_version = p_expected);
    GET DIAGNOSTICS inserted = ROW_COUNT;
    IF inserted = 0 AND cardinality(p_ids) > 0 THEN
        RAISE EXCEPTION 'stream % has no version %', p_stream, p_expected USING ERRCODE = 'LV409';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION append_events_at_head(
    p_tenant uuid, p_stream_type text, p_stream uuid, p_recorded_at timestamptz,
    p_ids uuid[], p_types text[], p_schema_versions integer[], p_data jsonb[], p_metadata jsonb[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    current_version integer;
BEGIN
    SELECT stream_version INTO current_version FROM events
    WHERE stream_id = p_stream AND tenant_id = p_tenant
    ORDER BY stream_version DESC LIMIT 1;
    IF current_version IS NULL THEN
        RAISE EXCEPTION 'stream % does not exist', p_stream USING ERRCODE = 'LV404';
    END IF;
    INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
    SELECT r.id, p_tenant, p_stream_type, p_stream, current_version + r.n::integer, r.type, r.schema_version, r.data, r.metadata, p_recorded_at
    FROM unnest(p_ids, p_types, p_schema_versions, p_data, p_metadata) WITH ORDINALITY
         AS r(id, type, schema_version, data, metadata, n);
END
$$;
