// Package kubelettest is a fake kubelet for device-plugin tests: kubelet's device manager over the real gRPC
// API (Registration, then ListAndWatch and Allocate), publishing the device counts on the Node as kubelet does.
package kubelettest

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Kubelet plays kubelet's device manager over the real gRPC API: it serves the Registration service on
// kubelet.sock in dir; on Register it connects to the plugin's endpoint, asks for its options and follows
// ListAndWatch, publishing the device counts on the Node's status as kubelet does; Allocate is called the way
// kubelet admits a container.
type Kubelet struct {
	t testing.TB
	// Dir is kubelet's device-plugin folder.
	Dir    string
	client kubernetes.Interface // nil: no Node status updates
	node   string

	mu            sync.Mutex
	srv           *grpc.Server
	registrations []*pluginapi.RegisterRequest
	options       *pluginapi.DevicePluginOptions
	conn          *grpc.ClientConn
	plugin        pluginapi.DevicePluginClient
	devices       []*pluginapi.Device // the last ListAndWatch answer
	lists         int                 // ListAndWatch answers received
	watchErr      error
}

// Start serves kubelet.sock in dir; client (nil: no Node status updates) and node are where device counts go.
func Start(t testing.TB, dir string, client kubernetes.Interface, node string) *Kubelet {
	t.Helper()
	k := &Kubelet{t: t, Dir: dir, client: client, node: node}
	k.start()
	t.Cleanup(k.Stop)
	return k
}

func (k *Kubelet) start() {
	k.t.Helper()
	ln, err := net.Listen("unix", filepath.Join(k.Dir, "kubelet.sock"))
	if err != nil {
		k.t.Fatalf("fake kubelet: %v", err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, &registration{k: k})
	k.mu.Lock()
	k.srv = srv
	k.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (k *Kubelet) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.srv != nil {
		k.srv.Stop()
		k.srv = nil
	}
	if k.conn != nil {
		_ = k.conn.Close()
		k.conn, k.plugin, k.devices = nil, nil, nil
	}
}

// restart is what a kubelet restart looks like to a plugin: kubelet goes away, its device manager deletes every
// socket in the folder, and a new kubelet.sock appears.
func (k *Kubelet) Restart() {
	k.t.Helper()
	k.Stop()
	entries, err := os.ReadDir(k.Dir)
	if err != nil {
		k.t.Fatal(err)
	}
	for _, e := range entries {
		_ = os.Remove(filepath.Join(k.Dir, e.Name()))
	}
	k.start()
}

type registration struct {
	pluginapi.UnimplementedRegistrationServer
	k *Kubelet
}

// Register checks the request as kubelet does, then connects to the plugin in the background.
func (r *registration) Register(_ context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	if req.Version != pluginapi.Version {
		return nil, errors.New("unsupported version " + req.Version)
	}
	k := r.k
	k.mu.Lock()
	k.registrations = append(k.registrations, req)
	k.mu.Unlock()
	go k.connect(req)
	return &pluginapi.Empty{}, nil
}

func (k *Kubelet) connect(req *pluginapi.RegisterRequest) {
	conn, err := grpc.NewClient("unix://"+filepath.Join(k.Dir, req.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		k.setWatchErr(err)
		return
	}
	client := pluginapi.NewDevicePluginClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	opts, err := client.GetDevicePluginOptions(ctx, &pluginapi.Empty{})
	cancel()
	if err != nil {
		k.setWatchErr(err)
		_ = conn.Close()
		return
	}
	k.mu.Lock()
	if k.conn != nil {
		_ = k.conn.Close()
	}
	k.conn, k.plugin, k.options = conn, client, opts
	k.mu.Unlock()
	stream, err := client.ListAndWatch(context.Background(), &pluginapi.Empty{})
	if err != nil {
		k.setWatchErr(err)
		return
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			k.setWatchErr(err)
			return
		}
		k.mu.Lock()
		k.devices, k.lists = resp.Devices, k.lists+1
		k.mu.Unlock()
		k.publishCounts(req.ResourceName, resp.Devices)
	}
}

func (k *Kubelet) setWatchErr(err error) {
	k.mu.Lock()
	k.watchErr = err
	k.mu.Unlock()
}

// publishCounts writes capacity (all devices) and allocatable (healthy ones) of the resource on the Node.
func (k *Kubelet) publishCounts(res string, devs []*pluginapi.Device) {
	if k.client == nil {
		return
	}
	healthy := 0
	for _, d := range devs {
		if d.Health == pluginapi.Healthy {
			healthy++
		}
	}
	for range 5 {
		n, err := k.client.CoreV1().Nodes().Get(context.Background(), k.node, metav1.GetOptions{})
		if err != nil {
			return
		}
		if n.Status.Capacity == nil {
			n.Status.Capacity = corev1.ResourceList{}
		}
		if n.Status.Allocatable == nil {
			n.Status.Allocatable = corev1.ResourceList{}
		}
		n.Status.Capacity[corev1.ResourceName(res)] = *resource.NewQuantity(int64(len(devs)), resource.DecimalSI)
		n.Status.Allocatable[corev1.ResourceName(res)] = *resource.NewQuantity(int64(healthy), resource.DecimalSI)
		if _, err := k.client.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err == nil {
			return
		}
	}
}

// registrationCount is how many times the plugin registered.
func (k *Kubelet) RegistrationCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.registrations)
}

func (k *Kubelet) LastRegistration() *pluginapi.RegisterRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.registrations) == 0 {
		return nil
	}
	return k.registrations[len(k.registrations)-1]
}

// waitDevices waits until the last ListAndWatch answer satisfies cond.
func (k *Kubelet) WaitDevices(what string, cond func([]*pluginapi.Device) bool) []*pluginapi.Device {
	k.t.Helper()
	var devs []*pluginapi.Device
	WaitFor(k.t, 20*time.Second, what, func() bool {
		k.mu.Lock()
		defer k.mu.Unlock()
		devs = k.devices
		return k.plugin != nil && cond(devs)
	})
	return devs
}

// allocate admits a container asking for n devices: it picks n healthy devices and calls Allocate.
func (k *Kubelet) Allocate(n int) (*pluginapi.ContainerAllocateResponse, error) {
	k.t.Helper()
	k.mu.Lock()
	client := k.plugin
	var ids []string
	for _, d := range k.devices {
		if len(ids) < n && d.Health == pluginapi.Healthy {
			ids = append(ids, d.ID)
		}
	}
	k.mu.Unlock()
	if client == nil {
		k.t.Fatal("fake kubelet: no plugin registered")
	}
	if len(ids) < n {
		k.t.Fatalf("fake kubelet: %d healthy devices, want %d", len(ids), n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: ids}}})
	if err != nil {
		return nil, err
	}
	if len(resp.ContainerResponses) != 1 {
		k.t.Fatalf("Allocate answered %d container responses, want 1", len(resp.ContainerResponses))
	}
	return resp.ContainerResponses[0], nil
}

// waitFor polls cond every 20 ms and fails the test after timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
