-- The event store. Rows are appended by any number of writers; position, hash
-- and prevhash are filled in after commit by the single sequencer (sequencer.go).
CREATE TABLE events (
    seq            bigserial PRIMARY KEY,  -- insert order only: never exposed, neither gap-free nor commit order
    id             uuid        NOT NULL UNIQUE,
    tenant_id      uuid        NOT NULL,
    stream_type    text        NOT NULL,
    stream_id      uuid        NOT NULL,
    stream_version integer     NOT NULL CHECK (stream_version > 0),
    type           text        NOT NULL,
    schema_version integer     NOT NULL,
    data           jsonb       NOT NULL,
    metadata       jsonb       NOT NULL,
    recorded_at    timestamptz NOT NULL,
    position       bigint UNIQUE,
    prevhash       text,
    hash           text,
    UNIQUE (stream_id, stream_version)
);

-- The sequencer's queue: committed rows still waiting for a position.
CREATE INDEX events_unsequenced ON events (seq) WHERE position IS NULL;
CREATE INDEX events_tenant_position ON events (tenant_id, position) WHERE position IS NOT NULL;

-- One row: the last position assigned and the last position published to NATS.
CREATE TABLE sequencer_state (
    id                 integer PRIMARY KEY CHECK (id = 1),
    last_position      bigint NOT NULL,
    published_position bigint NOT NULL
);
INSERT INTO sequencer_state VALUES (1, 0, 0);

-- The head of each tenant's hash chain.
CREATE TABLE chain_heads (
    tenant_id     uuid PRIMARY KEY,
    last_position bigint NOT NULL,
    hash          text   NOT NULL
);
