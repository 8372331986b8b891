-- The dispatcher's claim found due deliveries through (next_attempt_at)
-- and then skipped, row by row, those whose lease another sender still
-- holds. Under load most pending deliveries are leased (being sent), so
-- every claim read each of their rows to throw it away: 4.9 ms a claim in
-- a lifecycle run at 200 payments/s, the costliest statement of the run.
-- A delivery can be claimed from the later of its next attempt and the end
-- of its lease (greatest() ignores a NULL lease), so an index on that time
-- leads the claim to the claimable rows only.
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_claimable ON webhook_deliveries (greatest(next_attempt_at, lease_until))
    WHERE status = 'pending';
