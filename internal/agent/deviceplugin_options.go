package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Defaults of DevicePluginOptions.
const (
	// DefaultDevicePluginDir is kubelet's device-plugin folder (k8s.io/kubelet's DevicePluginPath).
	DefaultDevicePluginDir      = "/var/lib/kubelet/device-plugins/"
	DefaultDevicePluginResource = "nvidia.com/gpu"
	DefaultDevicePluginSocket   = "kubectl-hami-nvidia.sock"
	// DefaultHamiCoreDir is where HAMi's chart installs HAMi-core on the host (libvgpu.so, ld.so.preload).
	DefaultHamiCoreDir = "/usr/local/vgpu"
)

// DevicePluginOptions configure the kubelet device plugin (internal/agent/deviceplugin).
type DevicePluginOptions struct {
	// NodeName is the Node whose pods are allocated; only its lock is ever released. The agent fills it in.
	NodeName string
	// SocketDir is kubelet's device-plugin folder: kubelet.sock is there, and the plugin's socket goes there.
	SocketDir string
	// SocketName is the file name of the plugin's socket in SocketDir.
	SocketName string
	// ResourceName is the extended resource registered with kubelet.
	ResourceName string
	// HamiCoreDir is the host folder holding HAMi-core (libvgpu.so, ld.so.preload); per-container cache folders
	// are created under it. The agent must see it at the same path (a hostPath mount of the same path).
	HamiCoreDir string
	// PollInterval is how often kubelet.sock and the plugin's own socket are checked (a kubelet restart recreates
	// the first and deletes the second).
	PollInterval time.Duration
	// RetryInterval is the wait after a failed registration.
	RetryInterval time.Duration
	// Log receives the plugin's log; nil discards it (the agent passes its own).
	Log *slog.Logger
	// Mig creates the MIG instances of pods placed on GPUs in MIG mode; nil when the GPU source cannot (the
	// agent fills it in from its source). Without it a MIG GPU's entry fails Allocate.
	Mig MigManager
	// MigReconcileInterval is how often MIG instances no live pod holds any more are destroyed (HAMi: 5s).
	MigReconcileInterval time.Duration
}

// DefaultDevicePluginOptions are the defaults of `kubectl hami agent --device-plugin`.
func DefaultDevicePluginOptions() DevicePluginOptions {
	return DevicePluginOptions{
		SocketDir:            DefaultDevicePluginDir,
		SocketName:           DefaultDevicePluginSocket,
		ResourceName:         DefaultDevicePluginResource,
		HamiCoreDir:          DefaultHamiCoreDir,
		PollInterval:         time.Second,
		RetryInterval:        5 * time.Second,
		MigReconcileInterval: 5 * time.Second,
	}
}

// Validate checks the options.
func (o DevicePluginOptions) Validate() error {
	switch {
	case o.NodeName == "":
		return errors.New("device plugin: no node name")
	case o.SocketDir == "" || !filepath.IsAbs(o.SocketDir):
		return fmt.Errorf("--device-plugin-dir %q: want an absolute path", o.SocketDir)
	case o.SocketName == "" || strings.ContainsRune(o.SocketName, '/') || o.SocketName == "kubelet.sock":
		return fmt.Errorf("device plugin socket name %q: want a file name other than kubelet.sock", o.SocketName)
	case !validResourceName(o.ResourceName):
		return fmt.Errorf("--device-plugin-resource %q: want an extended resource name such as %s", o.ResourceName, DefaultDevicePluginResource)
	case o.HamiCoreDir == "" || !filepath.IsAbs(o.HamiCoreDir):
		return fmt.Errorf("--hami-core-dir %q: want an absolute path", o.HamiCoreDir)
	case o.PollInterval <= 0 || o.RetryInterval <= 0 || o.MigReconcileInterval <= 0:
		return errors.New("device plugin: poll, retry and MIG reconcile intervals must be positive")
	}
	return nil
}

// validResourceName accepts domain/name with a domain outside kubernetes.io, as kubelet requires of device plugins.
func validResourceName(s string) bool {
	domain, name, ok := strings.Cut(s, "/")
	return ok && domain != "" && name != "" && strings.Contains(domain, ".") && !strings.Contains(name, "/") &&
		!strings.HasSuffix(domain, "kubernetes.io")
}

// DevicePlugin is a device plugin that serves until ctx ends.
type DevicePlugin interface {
	Run(ctx context.Context) error
}

// DevicePluginFactory builds the device plugin over the agent's registration.
type DevicePluginFactory func(a *Agent, client kubernetes.Interface, opts DevicePluginOptions) (DevicePlugin, error)

// devicePluginFactory is nil in binaries without the device plugin (see RegisterDevicePlugin).
var devicePluginFactory DevicePluginFactory

// RegisterDevicePlugin installs the device plugin. internal/agent/withnvml does it in the binaries that can run
// the agent: the plugin links gRPC, which a kubectl plugin without NVML has no use for.
func RegisterDevicePlugin(f DevicePluginFactory) { devicePluginFactory = f }

// errNoDevicePlugin: --device-plugin in a binary without it.
var errNoDevicePlugin = errors.New("--device-plugin: this binary was built without the device plugin; use the agent image or build with -tags " + BuildTags)
