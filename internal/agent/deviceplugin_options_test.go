package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// TestRunWithoutTheDevicePlugin: --device-plugin in a binary that did not register the plugin stops the agent
// with a clear error instead of running without serving kubelet.
func TestRunWithoutTheDevicePlugin(t *testing.T) {
	saved := devicePluginFactory
	devicePluginFactory = nil
	t.Cleanup(func() { devicePluginFactory = saved })
	dp := DefaultDevicePluginOptions()
	a, _ := fakeAgent(t, twoT4s(), nil, func(o *Options) { o.DevicePlugin = &dp })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Run(ctx); !errors.Is(err, errNoDevicePlugin) {
		t.Errorf("Run = %v, want %v", err, errNoDevicePlugin)
	}
}

// idlePlugin is a device plugin that serves nothing until ctx ends.
type idlePlugin struct{}

func (idlePlugin) Run(ctx context.Context) error { <-ctx.Done(); return nil }

// TestRegistersAllocatorWhileServingThePlugin: with the device plugin, the agent's registration carries
// hami.io/node-nvidia-allocator (the extender then binds the node without HAMi's lock) and the key goes when the
// agent stops; without the plugin, a key left behind is removed at registration.
func TestRegistersAllocatorWhileServingThePlugin(t *testing.T) {
	saved := devicePluginFactory
	devicePluginFactory = func(*Agent, kubernetes.Interface, DevicePluginOptions) (DevicePlugin, error) {
		return idlePlugin{}, nil
	}
	t.Cleanup(func() { devicePluginFactory = saved })
	allocator := func(cs *fake.Clientset) (string, bool) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "gpu-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := n.Annotations[codec.NodeAllocatorAnnotation]
		return v, ok
	}
	dp := DefaultDevicePluginOptions()
	a, cs := fakeAgent(t, twoT4s(), []any{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1"}}}, func(o *Options) { o.DevicePlugin = &dp })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if v, _ := allocator(cs); v == codec.AllocatorKubectlHAMi {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent serving the device plugin did not register %s", codec.NodeAllocatorAnnotation)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, ok := allocator(cs); ok {
		t.Errorf("after the agent stopped the Node still says %s=%s", codec.NodeAllocatorAnnotation, v)
	}

	left := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Annotations: map[string]string{codec.NodeAllocatorAnnotation: codec.AllocatorKubectlHAMi}}}
	b, cs2 := fakeAgent(t, twoT4s(), []any{left}, nil)
	if _, err := b.RegisterOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, ok := allocator(cs2); ok {
		t.Errorf("an agent without the device plugin left %s=%s", codec.NodeAllocatorAnnotation, v)
	}
}
