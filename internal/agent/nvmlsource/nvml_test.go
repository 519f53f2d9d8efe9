//go:build linux && cgo

package nvmlsource

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

func TestDevicesFromMock(t *testing.T) {
	m := newMockGPUs(t, dgxa100.New())
	gs, err := m.source().Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(gs))
	}
	for i, g := range gs {
		want := agent.GPU{
			Index: i, UUID: m.dev[i].UUID, Name: "Mock NVIDIA A100-SXM4-40GB", MemoryMiB: 40960,
			BusID: strings.ToUpper("00000000:" + m.dev[i].PciBusID[5:]), NUMA: wantNUMA[i],
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("GPU %d = %+v, want %+v", i, g, want)
		}
	}
}

func TestMIGProfiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		mock  *mockGPUs
		names []string
	}{
		{"dgxa100", newMockGPUs(t, dgxa100.New()), []string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", "1g.5gb+me", "1g.10gb"}},
		{"dgxh100", newMockGPUs(t, dgxh100.New()), []string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.10gb+me", "1g.20gb"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.mock
			m.dev[0].SetMigMode(nvml.DEVICE_MIG_ENABLE)
			src := m.source()
			gs, err := src.Devices()
			if err != nil {
				t.Fatal(err)
			}
			g := gs[0]
			if !g.MIG || g.Err != nil || gs[1].MIG {
				t.Fatalf("GPU 0 MIG=%v err=%v, agent.GPU 1 MIG=%v; want only agent.GPU 0 in MIG mode", g.MIG, g.Err, gs[1].MIG)
			}
			var names []string
			for _, p := range g.MigProfiles {
				names = append(names, p.Name)
				if len(p.Placements) == 0 {
					t.Errorf("profile %s has no placements", p.Name)
				}
			}
			if !reflect.DeepEqual(names, c.names) {
				t.Errorf("profiles %v, want %v", names, c.names)
			}
			checkMigProfiles(t, m.dev[0], g.MigProfiles)
			// Cores: the profile's SMs over the full profile's, rounded up (1g: 15, 7g: 100).
			if g.MigProfiles[0].Core != 15 || g.MigProfiles[4].Core != 100 {
				t.Errorf("cores %d and %d, want 15 and 100", g.MigProfiles[0].Core, g.MigProfiles[4].Core)
			}

			devs := agent.DeviceInfos(gs, agent.DefaultSettings(), false, nil)
			if d := devs[0]; d.Mode != "mig" || d.Count != 7 || d.Devcore != 100 || !reflect.DeepEqual(d.MigProfiles, g.MigProfiles) {
				t.Errorf("registration of the MIG agent.GPU: %+v", d)
			}
			if d := devs[1]; d.Mode != "hami-core" || d.Count != 10 || d.MigProfiles != nil {
				t.Errorf("registration of agent.GPU 1: %+v", d)
			}
			// What the scheduler reads back.
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
				codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)}}}
			cl := engine.NewCluster(engine.DefaultConfig())
			cl.SetNode(node)
			eg := cl.Node("n").GPUs[0]
			if eg.Mode != engine.ModeMIG || !reflect.DeepEqual(eg.MigProfiles, g.MigProfiles) || eg.Slots != 7 {
				t.Errorf("engine reads %+v", eg)
			}

			us, err := src.Usage()
			if err != nil {
				t.Fatal(err)
			}
			if us[0].UtilizationKnown || us[0].Err != nil || !us[1].UtilizationKnown {
				t.Errorf("usage: MIG agent.GPU %+v, agent.GPU 1 %+v; want no utilisation only on the MIG GPU", us[0], us[1])
			}
		})
	}
}

func TestMigProfileNameRounding(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		id       int
		slices   uint32
		memMB    uint64
		totalGiB uint64
		want     string
	}{
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 9856, 80, "1g.10gb"}, // A100 80GB, HAMi's example
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 3, 40192, 80, "3g.40gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 5952, 24, "1g.6gb"}, // A30
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, 1, 5952, 24, "1g.6gb+gfx"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, 1, 5952, 24, "1g.6gb-me"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME, 2, 11904, 24, "2g.12gb+me.all"},
	} {
		if got := MigProfileName(c.id, c.slices, c.memMB, c.totalGiB*gib); got != c.want {
			t.Errorf("MigProfileName(%d, %d, %d MB, %d GiB) = %q, want %q", c.id, c.slices, c.memMB, c.totalGiB, got, c.want)
		}
	}
}

func TestNoNVMLLibrary(t *testing.T) {
	// An explicit path that cannot exist: the same error as a node without the driver.
	_, err := New(agent.NVMLOptions{LibraryPath: "/nonexistent/libnvidia-ml.so.1"})
	if !errors.Is(err, agent.ErrLibraryNotFound) || !strings.Contains(err.Error(), "libnvidia-ml.so.1") {
		t.Errorf("New with a missing library: %v; want agent.ErrLibraryNotFound naming libnvidia-ml.so.1", err)
	}
	// The real default lookup: on this agent.GPU-less machine the library is not there.
	src, err := New(agent.NVMLOptions{})
	if err == nil {
		_ = src.Close()
		t.Skip("libnvidia-ml.so.1 is installed on this machine; the default lookup found it")
	}
	if !errors.Is(err, agent.ErrLibraryNotFound) {
		t.Fatalf("New on a machine without NVML: %v; want ErrLibraryNotFound", err)
	}
	t.Logf("error: %v", err)
}

func TestNVMLInitError(t *testing.T) {
	s := dgxa100.New()
	s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	_, err := NewFrom(s, agent.NVMLOptions{})
	if err == nil || errors.Is(err, agent.ErrLibraryNotFound) || !strings.Contains(err.Error(), "NVML init failed") {
		t.Errorf("init failure: %v", err)
	}
}

func TestLostGPU(t *testing.T) {
	t.Run("a agent.GPU NVML cannot read keeps its last reading and registers unhealthy", func(t *testing.T) {
		m := newMockGPUs(t, dgxa100.New())
		a := newObserveAgent(t, m.source())
		ctx := context.Background()
		if _, err := a.Scan(ctx); err != nil {
			t.Fatal(err)
		}
		m.dev[4].GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		devs, err := a.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(devs) != 8 || devs[4].ID != m.dev[4].UUID || devs[4].Health || !devs[3].Health || devs[4].Devmem != 40960 {
			t.Errorf("registration after agent.GPU 4 was lost: %+v", devs)
		}
	})
	t.Run("ERROR_GPU_IS_LOST from the event wait marks every agent.GPU unhealthy", func(t *testing.T) {
		m := newMockGPUs(t, dgxa100.New())
		lost := make(chan struct{})
		m.Server.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
			return &mock.EventSet{
				WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
					select {
					case <-lost:
						return nvml.EventData{}, nvml.ERROR_GPU_IS_LOST
					case <-time.After(20 * time.Millisecond):
						return nvml.EventData{}, nvml.ERROR_TIMEOUT
					}
				},
				FreeFunc: func() nvml.Return { return nvml.SUCCESS },
			}, nvml.SUCCESS
		}
		src := m.source()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		events, err := src.Events(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a := newObserveAgent(t, src)
		close(lost)
		select {
		case ev := <-events:
			if !ev.Lost || ev.UUID != "" {
				t.Fatalf("event %+v, want a lost agent.GPU without a UUID", ev)
			}
			a.HandleEvent(ev)
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
		}
		devs, err := a.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			if d.Health {
				t.Errorf("GPU %s healthy after ERROR_GPU_IS_LOST", d.ID)
			}
		}
		cancel()
		for range events { // the channel closes once the context ends
		}
	})
}

func TestEventsSkipGPUsWithoutXIDSupport(t *testing.T) {
	m := newMockGPUs(t, dgxa100.New())
	for _, d := range m.dev {
		d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	}
	if _, err := m.source().Events(context.Background()); err == nil {
		t.Error("Events succeeded although no agent.GPU supports XID events")
	}
}

// newObserveAgent is an agent in observe mode without a cluster.
func newObserveAgent(t *testing.T, src agent.GPUSource) *agent.Agent {
	t.Helper()
	o := agent.DefaultOptions()
	o.NodeName, o.Mode, o.Listen, o.PodLookup, o.Log = "n", agent.RunObserve, "", false, testLogger(t)
	a, err := agent.New(src, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRealNVML reads this machine's GPUs through the real NVML; it skips where libnvidia-ml.so.1 is missing (run
// it on a GPU node: go test ./internal/agent/nvmlsource -run TestRealNVML -v).
func TestRealNVML(t *testing.T) {
	src, err := New(agent.NVMLOptions{Log: agenttest.Logger(t)})
	if errors.Is(err, agent.ErrLibraryNotFound) {
		t.Skip("no libnvidia-ml.so.1 on this machine")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gs, err := src.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		t.Logf("GPU %d %s %q %d MiB bus %s NUMA %d MIG %v (%d profiles) err %v", g.Index, g.UUID, g.Name, g.MemoryMiB, g.BusID, g.NUMA, g.MIG, len(g.MigProfiles), g.Err)
		if g.Err != nil || !strings.HasPrefix(g.UUID, "GPU-") || g.Name == "" || g.MemoryMiB <= 0 {
			t.Errorf("GPU %d read badly: %+v", g.Index, g)
		}
	}
	us, err := src.Usage()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		t.Logf("GPU %d used %d of %d bytes, utilisation %v (%v), %d processes, err %v", u.Index, u.MemoryUsedBytes, u.MemoryTotalBytes, u.Utilization, u.UtilizationKnown, len(u.Processes), u.Err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	events, err := src.Events(ctx)
	if err != nil {
		t.Logf("XID events: %v", err)
		return
	}
	for ev := range events {
		t.Logf("event %+v", ev)
	}
}
