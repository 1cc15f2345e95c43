package postgres

import (
	"context"
	"errors"
	"time"
)

// WaitCommand returns the outcome of commandID for tenantID as soon as one is
// committed: at once if it already is, otherwise when ApplyBatch records it.
// It waits until ctx is done and then returns ctx.Err(). Waiting costs no
// connection of its own: all waiters of a Store share one LISTEN connection,
// and each re-checks the table every 200 ms in case a notification is lost.
func (s *Store) WaitCommand(ctx context.Context, tenantID, commandID string) (Command, error) {
	wake, unsubscribe := s.listener.subscribe(commandID)
	defer unsubscribe()
	tick := time.NewTicker(s.recheck)
	defer tick.Stop()
	for {
		c, err := s.GetCommand(ctx, tenantID, commandID)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return Command{}, ctx.Err()
		}
		if !errors.Is(err, ErrNotFound) {
			return Command{}, err
		}
		select {
		case <-ctx.Done():
			return Command{}, ctx.Err()
		case <-wake:
		case <-tick.C:
		}
	}
}
