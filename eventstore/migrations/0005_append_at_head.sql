-- append_events_at_head appends events whose decision does not depend on the
-- stream's state (a webhook delivery attempt: a fact of the outside world)
-- after whatever the stream holds when the statement runs, instead of at a
-- version the writer read beforehand. It saves such writers the read, and
-- the conflicts with the stream's other writers that the read's age caused.
-- The versions are still one per event with no gap: a writer racing it for
-- the same version collides on UNIQUE (stream_id, stream_version), and
-- store.go retries. The stream must exist in p_tenant (SQLSTATE LV404).
CREATE FUNCTION append_events_at_head(
    p_tenant uuid, p_stream_type text, p_stream uuid, p_recorded_at timestamptz,
    p_ids uuid[], p_types text[], p_schema_versions integer[], p_data jsonb[], p_metadata jsonb[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    current_version integer;
BEGIN
    SELECT coalesce(max(stream_version), 0) INTO current_version FROM events
    WHERE stream_id = p_stream AND tenant_id = p_tenant;
    IF current_version = 0 THEN
        RAISE EXCEPTION 'stream % does not exist', p_stream USING ERRCODE = 'LV404';
    END IF;
    INSERT INTO events (id, tenant_id, stream_type, stream_id, stream_version, type, schema_version, data, metadata, recorded_at)
    SELECT r.id, p_tenant, p_stream_type, p_stream, current_version + r.n::integer, r.type, r.schema_version, r.data, r.metadata, p_recorded_at
    FROM unnest(p_ids, p_types, p_schema_versions, p_data, p_metadata) WITH ORDINALITY
         AS r(id, type, schema_version, data, metadata, n);
END
$$;
