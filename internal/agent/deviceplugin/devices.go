package deviceplugin

import (
	"fmt"
	"slices"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Source is where the plugin reads the node's GPUs: the agent's registration, which already carries XID health.
// *agent.Agent implements it.
type Source interface {
	// Devices is the registration of the last scan (nil before the first).
	Devices() []codec.DeviceInfo
	// Subscribe delivers the registration whenever a scan changes it (a GPU turning unhealthy included).
	Subscribe() <-chan []codec.DeviceInfo
	// MemoryScaling is the effective memory scaling of the node (above 1 the GPUs are oversubscribed).
	MemoryScaling() float64
}

// VirtualDeviceID names slot n of a GPU, as HAMi's device plugin does: `<uuid>-<n>`.
func VirtualDeviceID(uuid string, n int) string { return fmt.Sprintf("%s-%d", uuid, n) }

// virtualDevices turns the registration into kubelet's device list: Count slots per GPU, each as healthy as its
// GPU and on its GPU's NUMA node.
func virtualDevices(devs []codec.DeviceInfo) []*pluginapi.Device {
	var out []*pluginapi.Device
	for _, d := range devs {
		health := pluginapi.Healthy
		if !d.Health {
			health = pluginapi.Unhealthy
		}
		for n := range int(max(d.Count, 0)) {
			out = append(out, &pluginapi.Device{
				ID:       VirtualDeviceID(d.ID, n),
				Health:   health,
				Topology: &pluginapi.TopologyInfo{Nodes: []*pluginapi.NUMANode{{ID: int64(d.Numa)}}},
			})
		}
	}
	return out
}

// sameDevices reports whether two device lists would look the same to kubelet.
func sameDevices(a, b []*pluginapi.Device) bool {
	return slices.EqualFunc(a, b, func(x, y *pluginapi.Device) bool {
		return x.ID == y.ID && x.Health == y.Health && numaOf(x) == numaOf(y)
	})
}

func numaOf(d *pluginapi.Device) int64 {
	if nodes := d.GetTopology().GetNodes(); len(nodes) > 0 {
		return nodes[0].GetID()
	}
	return -1
}
