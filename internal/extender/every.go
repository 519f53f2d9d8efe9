package extender

import (
	"context"
	"time"
)

// runEvery calls fn every interval until ctx ends (the janitor's and the handshake stamper's loops).
func runEvery(ctx context.Context, every time.Duration, fn func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
