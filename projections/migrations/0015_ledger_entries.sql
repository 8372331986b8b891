-- Double-entry postings, one row per money event (a journal entry) instead
-- of one per posting line (0007): the event's lines as parallel arrays in
-- line order, line n being element n of each.
--
-- A million events carry 1.4 million lines in 437,031 events. Each row
-- costs Postgres a tuple to write, and each index build a tuple to sort:
-- a rebuild's postings (COPY, both indexes and ANALYZE) took 3.5-3.9 s of
-- the machine's CPU as lines and 2.2-2.6 s as entries, in interleaved
-- runs of one kept history. An append writes one row and two index
-- entries for its postings instead of some three times that, and the
-- trial balance reads a third of the rows.
--
-- The lines one by one, as 0007's table held them:
--   SELECT le.event_id, l.line, le.tenant_id, le.recorded_at, l.account, l.currency, l.side, l.amount
--   FROM ledger_entries le,
--        unnest(le.accounts, le.currencies, le.sides, le.amounts) WITH ORDINALITY AS l(account, currency, side, amount, line)
-- (not a view: a rebuild swaps the table in, and a view would follow the
-- old one out).
--
-- The checks are those 0007 had on each line, on every element: sides
-- are debit or credit, amounts positive, no element NULL, and the arrays
-- one-dimensional, non-empty and of one length.
CREATE TABLE ledger_entries (
    event_id    uuid        PRIMARY KEY,
    tenant_id   uuid        NOT NULL,
    recorded_at timestamptz NOT NULL,
    accounts    text[]      NOT NULL,
    currencies  text[]      NOT NULL,
    sides       text[]      NOT NULL,
    amounts     numeric[]   NOT NULL,
    CONSTRAINT ledger_entries_one_dimension CHECK (array_ndims(accounts) = 1 AND array_ndims(currencies) = 1
        AND array_ndims(sides) = 1 AND array_ndims(amounts) = 1),
    CONSTRAINT ledger_entries_lines CHECK (cardinality(accounts) > 0 AND cardinality(currencies) = cardinality(accounts)
        AND cardinality(sides) = cardinality(accounts) AND cardinality(amounts) = cardinality(accounts)),
    CONSTRAINT ledger_entries_no_null CHECK (array_position(accounts, NULL) IS NULL AND array_position(currencies, NULL) IS NULL
        AND array_position(sides, NULL) IS NULL AND array_position(amounts, NULL) IS NULL),
    CONSTRAINT ledger_entries_sides CHECK (sides <@ ARRAY['debit', 'credit']),
    CONSTRAINT ledger_entries_amounts CHECK (0 < ALL (amounts))
);
CREATE INDEX ledger_entries_tenant ON ledger_entries (tenant_id, recorded_at);

-- An earlier ledgerd still running may be appending: the lock waits for
-- its transactions in flight, so the copy below sees every line they
-- wrote, and holds off the rest, which fail once the table is dropped
-- (their appends roll back whole) instead of writing lines no copy reads.
LOCK TABLE ledger_postings IN ACCESS EXCLUSIVE MODE;

INSERT INTO ledger_entries (event_id, tenant_id, recorded_at, accounts, currencies, sides, amounts)
SELECT event_id, tenant_id, recorded_at, array_agg(account ORDER BY line), array_agg(currency ORDER BY line),
       array_agg(side ORDER BY line), array_agg(amount ORDER BY line)
FROM ledger_postings
GROUP BY event_id, tenant_id, recorded_at;

DROP TABLE ledger_postings;

-- Stop every ledgerd of an earlier version first: their appends write
-- ledger_postings, which is gone, so they would fail (safely, as above)
-- until they are replaced. The copy takes some 7 s a million events on a
-- small machine, during which the first ledgerd to start holds the others
-- at the migrations' lock.
