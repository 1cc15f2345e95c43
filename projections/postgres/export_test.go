package postgres

import "time"

// SetRecheckInterval changes WaitCommand's fallback poll, so a test can
// prove that a notification, not the poll, woke a waiter.
func SetRecheckInterval(s *Store, d time.Duration) { s.recheck = d }
