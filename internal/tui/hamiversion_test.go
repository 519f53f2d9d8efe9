package tui

import (
	"testing"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestHAMiVersionKeepsThePendingPods: --hami-version rebuilds the world's model for that version; the pending
// pods must be the same as with the default version (a rebuild on the file's compact records once lost them).
func TestHAMiVersionKeepsThePendingPods(t *testing.T) {
	pending := func(version string) int {
		m, err := New(Options{Snapshot: demoSnapshot(t), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, HAMiVersion: version,
			Now: func() time.Time { return fixedNow }, NoColor: true})
		if err != nil {
			t.Fatal(err)
		}
		return len(m.data.Pending)
	}
	def := pending("")
	if def == 0 {
		t.Fatal("the demo has no pending pod: the test lost its case")
	}
	if got := pending("2.9"); got != def {
		t.Fatalf("--hami-version 2.9: %d pending pods, want %d as with the default version", got, def)
	}
}
