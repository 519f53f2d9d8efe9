package deviceplugin

import (
	"path/filepath"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
)

// Options configure a Plugin; they live in the agent package so that the agent's flags need no gRPC.
type Options = agent.DevicePluginOptions

// Defaults of Options.
const (
	DefaultSocketDir    = agent.DefaultDevicePluginDir
	DefaultResourceName = agent.DefaultDevicePluginResource
	DefaultSocketName   = agent.DefaultDevicePluginSocket
	DefaultHamiCoreDir  = agent.DefaultHamiCoreDir
)

// DefaultOptions are the defaults of `kubectl hami agent --device-plugin`.
func DefaultOptions() Options { return agent.DefaultDevicePluginOptions() }

// ForAgent is the agent.DevicePluginFactory: the device plugin over the agent's registration. Register it with
// agent.RegisterDevicePlugin.
func ForAgent(a *agent.Agent, client kubernetes.Interface, opts Options) (agent.DevicePlugin, error) {
	return New(a, client, opts)
}

// kubeletSocket is the path of kubelet's registration socket.
func kubeletSocket(o Options) string { return filepath.Join(o.SocketDir, "kubelet.sock") }

// pluginSocket is the path of the plugin's own socket.
func pluginSocket(o Options) string { return filepath.Join(o.SocketDir, o.SocketName) }
