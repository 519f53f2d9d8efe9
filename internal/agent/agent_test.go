package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// fakeSource is a GPUSource with fixed GPUs, for tests that need no NVML.
type fakeSource struct {
	mu   sync.Mutex
	gpus []GPU
}

func (f *fakeSource) Devices() ([]GPU, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]GPU(nil), f.gpus...), nil
}

func (f *fakeSource) Usage() ([]Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Usage, len(f.gpus))
	for i, g := range f.gpus {
		out[i] = Usage{Index: g.Index, UUID: g.UUID, MemoryTotalBytes: uint64(g.MemoryMiB) << 20}
	}
	return out, nil
}

func (f *fakeSource) Events(ctx context.Context) (<-chan XIDEvent, error) {
	return NullSource{}.Events(ctx)
}
func (f *fakeSource) Close() error { return nil }

func twoT4s() *fakeSource {
	return &fakeSource{gpus: []GPU{
		{Index: 0, UUID: "GPU-t4-0", Name: "Tesla T4", MemoryMiB: 15360},
		{Index: 1, UUID: "GPU-t4-1", Name: "Tesla T4", MemoryMiB: 15360},
	}}
}

func fakeAgent(t *testing.T, src GPUSource, objs []any, edit func(*Options)) (*Agent, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Node:
			_, _ = cs.CoreV1().Nodes().Create(context.Background(), o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, _ = cs.CoreV1().ConfigMaps(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{})
		}
	}
	o := DefaultOptions()
	o.NodeName, o.Listen, o.PodLookup, o.ConfigMap, o.Log = "gpu-1", "", false, "kube-system/hami-device-plugin", testLogger(t)
	if edit != nil {
		edit(&o)
	}
	a, err := New(src, cs, o)
	if err != nil {
		t.Fatal(err)
	}
	cs.ClearActions()
	return a, cs
}

func registration(t *testing.T, cs *fake.Clientset, node string) []codec.DeviceInfo {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := n.Annotations[codec.NodeRegisterAnnotation]
	if !ok {
		return nil
	}
	devs, err := codec.ParseNodeRegister(v)
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func TestNoGPUsNeverWipesARegistration(t *testing.T) {
	hami := "GPU-x,10,15360,100,NVIDIA-Tesla T4,0,true:"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{codec.NodeRegisterAnnotation: hami}}}
	a, cs := fakeAgent(t, NullSource{}, []any{node}, nil)
	if patched, err := a.RegisterOnce(context.Background()); patched || err != nil {
		t.Errorf("RegisterOnce with no GPUs = %v, %v; want neither a patch nor an error", patched, err)
	}
	for _, act := range cs.Actions() {
		if act.GetVerb() == "patch" || act.GetVerb() == "update" {
			t.Errorf("unexpected %s", act.GetVerb())
		}
	}
}

func TestConfigMapOverridesFlagsAndReloads(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "hami-device-plugin"},
		Data: map[string]string{NodeConfigKey: `{"nodeconfig":[{"name":"gpu-1","devicesplitcount":3,"filterdevices":{"index":[1]}}]}`}}
	a, cs := fakeAgent(t, twoT4s(), []any{node, cm}, func(o *Options) { o.Settings.SplitCount = 6 })
	ctx := context.Background()
	if _, err := a.RegisterOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if devs := registration(t, cs, "gpu-1"); len(devs) != 1 || devs[0].Count != 3 || devs[0].ID != "GPU-t4-0" {
		t.Errorf("with the ConfigMap entry: %+v; want GPU 0 only, 3 slots", devs)
	}
	// Edits apply on the next registration, without a restart.
	cm.Data[NodeConfigKey] = `{"nodeconfig":[]}`
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if patched, err := a.RegisterOnce(ctx); !patched || err != nil {
		t.Fatalf("RegisterOnce after the edit = %v, %v", patched, err)
	}
	if devs := registration(t, cs, "gpu-1"); len(devs) != 2 || devs[0].Count != 6 {
		t.Errorf("without an entry: %+v; want both GPUs with the flag's 6 slots", devs)
	}
	for _, act := range cs.Actions() {
		if act.GetResource().Resource == "nodes" && act.GetVerb() == "patch" {
			if name := act.(interface{ GetName() string }).GetName(); name != "gpu-1" {
				t.Errorf("patched Node %s", name)
			}
		}
	}
}

func TestObserveModeNeverPatches(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1"}}
	a, cs := fakeAgent(t, twoT4s(), []any{node}, func(o *Options) {
		o.Mode, o.RegisterInterval = RunObserve, 10*time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, act := range cs.Actions() {
		if act.GetResource().Resource == "nodes" || act.GetResource().Resource == "configmaps" {
			t.Errorf("observe mode did %s %s", act.GetVerb(), act.GetResource().Resource)
		}
	}
	if len(a.Devices()) != 2 || !a.Ready() {
		t.Errorf("observe mode still scans: %+v", a.Devices())
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/usage", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"registered": false`) {
		t.Errorf("/usage in observe mode: %d %s", rec.Code, rec.Body)
	}
}

func TestSubscribe(t *testing.T) {
	src := twoT4s()
	a, _ := fakeAgent(t, src, nil, func(o *Options) { o.Mode = RunObserve })
	ch := a.Subscribe()
	ctx := context.Background()
	if _, err := a.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if devs := <-ch; len(devs) != 2 || !devs[1].Health {
		t.Fatalf("first value %+v", devs)
	}
	if _, err := a.Scan(ctx); err != nil { // unchanged: nothing sent
		t.Fatal(err)
	}
	select {
	case v := <-ch:
		t.Fatalf("unchanged scan sent %+v", v)
	default:
	}
	a.HandleEvent(XIDEvent{UUID: "GPU-t4-1", XID: 79})
	a.HandleEvent(XIDEvent{UUID: "GPU-t4-0", XID: 43}) // ignored
	if _, err := a.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if devs := <-ch; !devs[0].Health || devs[1].Health {
		t.Errorf("after XID 79 on GPU 1: %+v", devs)
	}
}

func TestHandlerEndpoints(t *testing.T) {
	a, _ := fakeAgent(t, twoT4s(), nil, func(o *Options) { o.Mode = RunObserve })
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	if rec := get("/readyz"); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before a scan: %d", rec.Code)
	}
	if _, err := a.Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz", "/devices", "/usage", "/metrics"} {
		if rec := get(path); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	if body := get("/devices").Body.String(); !strings.Contains(body, `"GPU-t4-1"`) || !strings.Contains(body, `"annotation": "hami.io/node-nvidia-register"`) {
		t.Errorf("/devices: %s", body)
	}
}
