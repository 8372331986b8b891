-- append_events inserts one stream's new events only if the stream is still at
-- p_expected, and otherwise fails the statement itself with SQLSTATE LV409
-- (store.go maps it to ErrVersionConflict). Failing, rather than inserting
-- nothing, is what lets Store.Append send the insert and the read-model
-- statements in one pipeline: an error aborts the pipeline's whole
-- transaction, so the projection statements queued after it never commit.
-- Racing writers that both pass the check still collide on
-- UNIQUE (stream_id, stream_version): the second waits for the first and
-- fails with 23505.
CREATE FUNCTION append_events(
    p_tenant uuid, p_stream_type text, p_stream uuid, p_expected integer, p_recorded_at timestamptz,
    p_ids uuid[], p_versions integer[], p_types text[], p_schema_versions integer[], p_data jsonb[], p_metadata jsonb[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    current_version integer;
BEGIN
    SELECT coalesce(max(stream_version), 0) INTO current_version FROM events WHERE stream_id = p_stream;
    IF current_version <> p_expected THEN
        RAISE EXCEPTION 'stream % is at version %, not %', p_stream, current_version, p_expected
            USING ERRCODE = 'LV409';
    END IF;
    INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
    SELECT r.id, p_tenant, p_stream_type, p_stream, r.version, r.type, r.schema_version, r.data, r.metadata, p_recorded_at
    FROM unnest(p_ids, p_versions, p_types, p_schema_versions, p_data, p_metadata)
         AS r(id, version, type, schema_version, data, metadata);
END
$$;
