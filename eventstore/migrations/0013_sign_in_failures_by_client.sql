-- A failed dashboard sign-in records the client it came from (its peer
-- address, an IPv6 one by its /64), so the lock-out counts one address's
-- failures per client as well as in all: one source's guesses no longer
-- lock the address's owner out from everywhere. Rows written before, or
-- by an older ledgerd during an upgrade, have no client and count towards
-- the address's total only.
ALTER TABLE dashboard_sign_in_failures ADD COLUMN client text NOT NULL DEFAULT '';
