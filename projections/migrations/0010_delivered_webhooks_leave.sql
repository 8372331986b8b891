-- A webhook delivery leaves the work list once a 2xx delivered it
-- (projections/payments.go): nothing reads it after that, and its copy of
-- the payment (some 2 KB of jsonb) would be kept for ever. Its history is
-- webhook_attempts. Pending deliveries stay until delivered; exhausted ones
-- stay, with their payment, as the record of what was never delivered.
DELETE FROM webhook_deliveries WHERE status = 'delivered';
