package openai

import (
	"context"
	"time"
)

// SetSleep replaces the wait between attempts, so tests observe the waits
// instead of sleeping.
func (p *Provider) SetSleep(f func(ctx context.Context, d time.Duration) error) { p.sleep = f }
