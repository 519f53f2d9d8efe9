package tui

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/render"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsEveryView: over generated worlds, every view renders at 80x24 and 200x60 within its size,
// nothing panics, the Pending view gives every pending pod the reason top gives it (the same one-line verdict),
// and a drill into every pending pod opens its explanation.
func TestGeneratedWorldsEveryView(t *testing.T) {
	first, n := worldgen.Seeds(300)
	drilled := 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{})
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("seed %d: the UI panicked: %v\n%s", seed, r, debug.Stack())
				}
			}()
			drilled += checkWorldViews(t, seed, w)
		}()
		if t.Failed() {
			t.Fatalf("seed %d failed; rerun with WORLD_SEED=%d WORLDS=1", seed, seed)
		}
	}
	t.Logf("%d worlds from seed %d: %d drills into pending pods", n, first, drilled)
	if drilled == 0 {
		t.Error("no pending pod was drilled into: the generator is broken")
	}
}

func checkWorldViews(t *testing.T, seed uint64, w *snapshot.Snapshot) int {
	drilled := 0
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		m, err := New(Options{Snapshot: w, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return worldgen.Epoch.Add(time.Hour) }, NoColor: true})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		runCmd(m, m.Init())
		for _, v := range []string{"1", "2", "3", "4", "5", "6", "7"} {
			press(m, v)
			checkScreen(t, m, screen(m))
		}
		if size[0] != 200 {
			continue
		}
		// One verdict per pod: the Pending view's reason is what top and why-pending compute from the same objects.
		cfg, _ := w.Config(snapshot.DefaultDeviceConfigMap)
		ref, _ := w.Cluster(cfg)
		pods := map[string]*corev1.Pod{}
		for _, p := range w.Pods.Slice() {
			pods[p.Namespace+"/"+p.Name] = p
		}
		for _, p := range m.data.Pending {
			if pod := pods[p.Key()]; pod != nil {
				want := render.OneLine(ref.Evaluate(pod, engine.EvalOptions{Now: worldgen.Epoch.Add(time.Hour)}))
				if got := m.reason(p); got != want {
					t.Errorf("seed %d: %s: the UI says %q, top %q", seed, p.Key(), got, want)
				}
			}
		}
		for _, p := range m.data.Pending {
			press(m, "4", ":", "pending "+p.Namespace+"/"+p.Name, "enter", "enter")
			if got := screen(m); !strings.Contains(got, "Why pending: "+p.Key()) {
				t.Errorf("seed %d: drill into %s:\n%s", seed, p.Key(), got)
			}
			checkScreen(t, m, screen(m))
			press(m, "esc")
			drilled++
		}
	}
	return drilled
}
