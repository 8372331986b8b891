-- Failed dashboard sign-ins are deleted once the lock-out's window has
-- passed them (ReserveSignInAttempt), by when they failed; and one
-- client's failures are counted at every address it tried, before any
-- password is checked. Without these, every sign-in with a new address
-- added a row nothing removed.
CREATE INDEX dashboard_sign_in_failures_failed_at ON dashboard_sign_in_failures (failed_at);
CREATE INDEX dashboard_sign_in_failures_client ON dashboard_sign_in_failures (client, failed_at);
