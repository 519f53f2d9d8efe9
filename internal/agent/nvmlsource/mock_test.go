//go:build linux && cgo

package nvmlsource

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlmock"
)

// wantNUMA is the NUMA node each mock agent.GPU must register with.
var wantNUMA = nvmlmock.WantNUMA

// mockGPUs is nvmlmock's completed mock server, bound to a test.
type mockGPUs struct {
	*nvmlmock.GPUs
	t   testing.TB
	dev []*server.Device
}

func newMockGPUs(t testing.TB, s *server.Server) *mockGPUs {
	t.Helper()
	g, err := nvmlmock.New(s, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &mockGPUs{GPUs: g, t: t, dev: g.Devices}
}

// source initialises the NVML source over the mock.
func (m *mockGPUs) source() *Source {
	m.t.Helper()
	src, err := NewFrom(m.Server, agent.NVMLOptions{SysRoot: m.SysRoot, EventWait: 50 * time.Millisecond})
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = src.Close() })
	return src
}

func (m *mockGPUs) xid(i int, xid uint64) { m.XID(i, xid) }

func (m *mockGPUs) process(pid int, cgroupLines ...string) {
	m.t.Helper()
	if err := m.Process(pid, cgroupLines...); err != nil {
		m.t.Fatal(err)
	}
}

func podCgroup(uid, containerID string) string { return nvmlmock.PodCgroup(uid, containerID) }
