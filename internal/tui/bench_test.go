package tui

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// The UI benchmarks run on the cluster hack/genbig writes (5,000 nodes with 8 x 80 GiB GPUs, 50,000 running
// one-GPU pods, 2 pending pods, 20 namespace quotas), built in memory so no file is needed:
//
//	go test ./internal/tui -run '^$' -bench . -benchmem
//
// Targets (issue 8): first frame under 1 s, a redraw under 16 ms, an update after an event under 100 ms.

const (
	benchNodes = 5000
	benchPods  = 50000
)

var (
	bigOnce sync.Once
	bigSnap *snapshot.Snapshot
)

func bigSnapshot() *snapshot.Snapshot {
	bigOnce.Do(func() { bigSnap = genSnapshot(benchNodes, benchPods) })
	return bigSnap
}

// genSnapshot builds what `go run ./hack/genbig -nodes N -pods P` writes.
func genSnapshot(nodes, pods int) *snapshot.Snapshot {
	rng := rand.New(rand.NewPCG(7, 11))
	s := &snapshot.Snapshot{Source: fmt.Sprintf("generated %d nodes, %d pods", nodes, pods)}
	rv := 0
	next := func() string { rv++; return strconv.Itoa(rv) }
	q := resource.MustParse
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		devs := make([]codec.DeviceInfo, 8)
		for g := range devs {
			devs[g] = codec.DeviceInfo{ID: fmt.Sprintf("GPU-%s-%d", name, g), Index: g, Count: 10, Devmem: 81920, Devcore: 100,
				Type: "NVIDIA A100-SXM4-80GB", Numa: g / 4, Health: true, Mode: "hami-core"}
		}
		rl := corev1.ResourceList{"cpu": q("128"), "memory": q("1Ti"), "pods": q("110"), "nvidia.com/gpu": q("80")}
		s.Nodes = append(s.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: next(),
			Labels: map[string]string{"kubernetes.io/hostname": name}, Annotations: map[string]string{codec.NodeRegisterAnnotation: codec.FormatNodeRegister(devs)}},
			Status: corev1.NodeStatus{Allocatable: rl, Capacity: rl}})
	}
	pod := func(ns, name, node string, count, mem, cores int, annos map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: next(), Annotations: annos},
			Spec: corev1.PodSpec{SchedulerName: "hami-scheduler", Containers: []corev1.Container{{Name: "main", Image: "train:1",
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(int64(count), resource.DecimalSI),
						"nvidia.com/gpumem": *resource.NewQuantity(int64(mem), resource.DecimalSI), "nvidia.com/gpucores": *resource.NewQuantity(int64(cores), resource.DecimalSI)},
					Requests: corev1.ResourceList{"cpu": q("1"), "memory": q("4Gi")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if node != "" {
			p.Spec.NodeName = node
			p.Status.Phase = corev1.PodRunning
		}
		return p
	}
	for i := range pods {
		node := fmt.Sprintf("node-%05d", i%nodes)
		mem := 2048 + rng.IntN(6)*1024
		cores := 5 + rng.IntN(5)*5
		g := rng.IntN(8)
		devs := fmt.Sprintf("GPU-%s-%d,NVIDIA,%d,%d:;", node, g, mem, cores)
		s.Pods.Add(pod(fmt.Sprintf("team-%d", i%20), fmt.Sprintf("job-%06d", i), node, 1, mem, cores, map[string]string{
			codec.PodNodeAnnotation: node, codec.PodAllocatedAnnotation: devs, codec.PodToAllocateAnnotation: "", codec.PodBindPhaseAnnotation: "success"}))
	}
	s.Pods.Add(pod("team-1", "pending-big", "", 2, 82000, 10, nil))
	s.Pods.Add(pod("team-1", "pending-fits", "", 2, 8000, 10, nil))
	for t := range 20 {
		s.Quotas = append(s.Quotas, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("team-%d", t), Name: "gpu", ResourceVersion: next()},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits.nvidia.com/gpumem": q("100000000"), "limits.nvidia.com/gpucores": q("1000000")}}})
	}
	return s
}

func newBig(b *testing.B, width, height int) *Model {
	b.Helper()
	m, err := New(Options{Snapshot: bigSnapshot(), DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }})
	if err != nil {
		b.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	return m
}

// BenchmarkFirstFrame is start to first frame on a loaded snapshot: engine model, node views, the Nodes
// view's rows and the first View (the pending verdicts, and the rows of views not shown, come after the first
// frame). snapshot-MiB is the live heap of the decoded objects alone, model-MiB what the UI's model (engine
// model, views, rows) adds to it.
func BenchmarkFirstFrame(b *testing.B) {
	bigSnapshot()
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	before := heap()
	var m *Model
	done, n := cpuMeter(), 0
	for b.Loop() {
		m = newBig(b, 160, 48)
		_ = m.View()
		n++
	}
	done(b, n)
	b.StopTimer()
	after := heap()
	b.ReportMetric(before, "snapshot-MiB")
	b.ReportMetric(after-before, "model-MiB")
	runtime.KeepAlive(m)
}

// BenchmarkFirstFrameFile is BenchmarkFirstFrame on the same cluster read from a file, as `top --snapshot`
// reads it: the snapshot holds its pods as compact records, not whole objects (snapshot-MiB is then the
// records' heap), and model-MiB is what the UI adds to them.
func BenchmarkFirstFrameFile(b *testing.B) {
	fileOnce.Do(func() {
		var buf bytes.Buffer
		if err := genSnapshot(benchNodes, benchPods).WriteList(&buf, "json"); err != nil { // not bigSnapshot: no whole pod stays
			panic(err)
		}
		s, err := snapshot.Parse(buf.Bytes(), "big.json")
		if err != nil {
			panic(err)
		}
		fileSnap = s
	})
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	before := heap()
	var m *Model
	done, n := cpuMeter(), 0
	for b.Loop() {
		var err error
		m, err = New(Options{Snapshot: fileSnap, DeviceConfigMap: snapshot.DefaultDeviceConfigMap, Now: func() time.Time { return fixedNow }})
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		_ = m.View()
		n++
	}
	done(b, n)
	b.StopTimer()
	after := heap()
	b.ReportMetric(before, "snapshot-MiB")
	b.ReportMetric(after-before, "model-MiB")
	runtime.KeepAlive(m)
}

var (
	fileOnce sync.Once
	fileSnap *snapshot.Snapshot
)

// BenchmarkRedraw is one View of each screen (what a key press or a resize costs to draw).
func BenchmarkRedraw(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"nodes", nil},
		{"nodes-bottom", []string{"G"}},
		{"nodes-filtered", []string{"/", "node-049", "enter"}},
		{"node", []string{"enter"}},
		{"quotas", []string{"3"}},
		{"pending", []string{"4"}},
		{"why-pending", []string{"4", "enter"}},
		{"what-if", []string{"5"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := newBig(b, 160, 48)
			press(m, tc.keys...)
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkKey is a key press: Update then View (moving the cursor, sorting 5,000 rows, a filter keystroke).
func BenchmarkKey(b *testing.B) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"down", []string{"down"}},
		{"sort", []string{"s"}},
		{"filter-keystroke", []string{"/", "node-0"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			m := newBig(b, 160, 48)
			msgs := keyMsgs(tc.keys[len(tc.keys)-1])
			press(m, tc.keys[:len(tc.keys)-1]...)
			for b.Loop() {
				for _, msg := range msgs {
					m.Update(msg)
				}
				if tc.name == "filter-keystroke" {
					press(m, "backspace")
				}
				_ = m.View()
			}
		})
	}
}

// BenchmarkUpdateAfterEvent is an informer event to the frame that shows it: one pod changes (bound pod's
// memory), the queued change is applied to the engine model, the UI takes the new data (rows of every
// view rebuilt) and draws. Pending verdicts follow in their own command (BenchmarkPendingVerdicts).
func BenchmarkUpdateAfterEvent(b *testing.B) {
	m := newBig(b, 160, 48)
	m.queue = newQueue()
	base := bigSnapshot().Pods.At(123).DeepCopy()
	i := 0
	for b.Loop() {
		i++
		p := base.DeepCopy()
		p.ResourceVersion = "bench-" + strconv.Itoa(i)
		mem := 2048 + (i%2)*1024
		p.Annotations[codec.PodAllocatedAnnotation] = fmt.Sprintf("GPU-%s-0,NVIDIA,%d,5:;", p.Spec.NodeName, mem)
		m.queue.put(change{kind: kindPod, key: p.Namespace + "/" + p.Name, obj: p})
		changes, rs := m.queue.drain()
		m.Update(dataMsg{m.store.apply(changes, rs)})
		_ = m.View()
	}
}

// BenchmarkBurstOf1000Events: 1,000 pod changes coalesced into one update.
func BenchmarkBurstOf1000Events(b *testing.B) {
	m := newBig(b, 160, 48)
	m.queue = newQueue()
	pods := bigSnapshot().Pods.Slice()
	i := 0
	for b.Loop() {
		i++
		for j := range 1000 {
			p := pods[(j*37)%benchPods].DeepCopy()
			p.ResourceVersion = fmt.Sprintf("burst-%d-%d", i, j)
			m.queue.put(change{kind: kindPod, key: p.Namespace + "/" + p.Name, obj: p})
		}
		changes, rs := m.queue.drain()
		m.Update(dataMsg{m.store.apply(changes, rs)})
		_ = m.View()
	}
}

// BenchmarkPendingVerdicts evaluates the pending pods (2 here) after an update, off the UI goroutine.
func BenchmarkPendingVerdicts(b *testing.B) {
	m := newBig(b, 160, 48)
	for b.Loop() {
		_ = m.store.verdicts(m.data.Pending)
	}
}

// BenchmarkWhatIfKeystroke is one key typed in the what-if form: the engine's Evaluate and Capacity (up
// to 10,000 copies counted) and the answer's rendering.
func BenchmarkWhatIfKeystroke(b *testing.B) {
	m := newBig(b, 160, 48)
	press(m, "5", "enter", "tab", "ctrl+u", "8000")
	i := 0
	for b.Loop() {
		i++
		if i%2 == 1 {
			press(m, "backspace") // 800 MiB
		} else {
			press(m, "0") // 8000 MiB
		}
		_ = m.View()
	}
}
