package deviceplugin_test

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin/kubelettest"
)

// fakeKubelet is kubelettest's fake kubelet: kubelet's device manager over the real gRPC API.
type fakeKubelet struct {
	*kubelettest.Kubelet
	dir string
}

func startFakeKubelet(t testing.TB, dir string, client kubernetes.Interface, node string) *fakeKubelet {
	t.Helper()
	return &fakeKubelet{Kubelet: kubelettest.Start(t, dir, client, node), dir: dir}
}

// restart is what a kubelet restart looks like to a plugin: kubelet goes away, its device manager deletes every
// socket in the folder, and a new kubelet.sock appears.
func (k *fakeKubelet) restart() { k.Restart() }

func (k *fakeKubelet) registrationCount() int { return k.RegistrationCount() }

func (k *fakeKubelet) lastRegistration() *pluginapi.RegisterRequest { return k.LastRegistration() }

// waitDevices waits until the last ListAndWatch answer satisfies cond.
func (k *fakeKubelet) waitDevices(what string, cond func([]*pluginapi.Device) bool) []*pluginapi.Device {
	return k.WaitDevices(what, cond)
}

// allocate admits a container asking for n devices: it picks n healthy devices and calls Allocate.
func (k *fakeKubelet) allocate(n int) (*pluginapi.ContainerAllocateResponse, error) {
	return k.Allocate(n)
}

// waitFor polls cond every 20 ms and fails the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	kubelettest.WaitFor(t, timeout, what, cond)
}
