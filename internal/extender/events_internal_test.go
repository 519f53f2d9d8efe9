package extender

import (
	"testing"
	"time"
)

// TestEventLimiterAllow: one event per pod per interval, another at once when the summary changes.
func TestEventLimiterAllow(t *testing.T) {
	l := newEventLimiter(time.Minute)
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	steps := []struct {
		key, summary string
		at           time.Duration
		want         bool
	}{
		{"ns/a", "s1", 0, true},
		{"ns/a", "s1", time.Second, false},
		{"ns/a", "s1", 59 * time.Second, false},
		{"ns/b", "s1", 59 * time.Second, true}, // per pod
		{"ns/a", "s2", 60 * time.Second, true}, // summary changed
		{"ns/a", "s2", 90 * time.Second, false},
		{"ns/a", "s2", 120 * time.Second, true}, // interval passed
		{"ns/a", "s1", 121 * time.Second, true}, // changed back
		{"ns/a", "s1", 122 * time.Second, false},
	}
	for i, s := range steps {
		if got := l.allow(s.key, s.summary, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d (%s %q at +%s): allow = %v, want %v", i, s.key, s.summary, s.at, got, s.want)
		}
	}
}
