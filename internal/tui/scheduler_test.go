package tui

import (
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestCardOnlyWorldEveryView: issue 14's crash world (a pending pod asking only for a MIG slice that fits its
// queue, Volcano pods on NVIDIA's device plugin, a pod HAMi's webhook did not route): every view renders at
// both sizes, the Pending view names the preferred node and the scheduler, and a drill into every pending pod
// shows its explanation.
func TestCardOnlyWorldEveryView(t *testing.T) {
	data, err := os.ReadFile("../cli/testdata/world-card-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Parse(data, "world-card-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		m, err := New(Options{Snapshot: s, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }, NoColor: true})
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, v := range []string{"1", "2", "3", "4", "5", "6"} {
			press(m, v)
			checkScreen(t, m, screen(m))
		}
		press(m, ":", "pending", "enter")
		got := screen(m)
		if size[0] == 200 {
			for _, want := range []string{"fits now, preferred a100-mig-01 (volcano's to place", "SchedulerNotHAMi: asks for HAMi's nvidia.com/gpumem"} {
				if !strings.Contains(got, want) {
					t.Errorf("Pending view at %v lacks %q:\n%s", size, want, got)
				}
			}
		}
		for i := range m.data.Pending {
			p := m.data.Pending[i]
			press(m, ":", "pending "+p.Name, "enter", "enter")
			if got := screen(m); !strings.Contains(got, "Why pending: "+p.Key()) {
				t.Errorf("drill into %s at %v:\n%s", p.Key(), size, got)
			}
			checkScreen(t, m, screen(m))
			press(m, "esc")
		}
	}
}
