package deviceplugin

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// Defaults of Options.
const (
	DefaultSocketDir    = pluginapi.DevicePluginPath
	DefaultResourceName = "nvidia.com/gpu"
	DefaultSocketName   = "kubectl-hami-nvidia.sock"
	// DefaultHamiCoreDir is where HAMi's chart installs HAMi-core on the host (libvgpu.so, ld.so.preload).
	DefaultHamiCoreDir = "/usr/local/vgpu"
)

// Options configure a Plugin.
type Options struct {
	// NodeName is the Node whose pods are allocated; only its lock is ever released.
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
	// Log receives the plugin's log; nil discards it.
	Log *slog.Logger
}

// DefaultOptions are the defaults of `kubectl hami agent --device-plugin`.
func DefaultOptions() Options {
	return Options{
		SocketDir:     DefaultSocketDir,
		SocketName:    DefaultSocketName,
		ResourceName:  DefaultResourceName,
		HamiCoreDir:   DefaultHamiCoreDir,
		PollInterval:  time.Second,
		RetryInterval: 5 * time.Second,
	}
}

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.NodeName == "":
		return errors.New("device plugin: no node name")
	case o.SocketDir == "" || !filepath.IsAbs(o.SocketDir):
		return fmt.Errorf("--device-plugin-dir %q: want an absolute path", o.SocketDir)
	case o.SocketName == "" || strings.ContainsRune(o.SocketName, '/') || o.SocketName == "kubelet.sock":
		return fmt.Errorf("device plugin socket name %q: want a file name other than kubelet.sock", o.SocketName)
	case !validResourceName(o.ResourceName):
		return fmt.Errorf("--device-plugin-resource %q: want an extended resource name such as %s", o.ResourceName, DefaultResourceName)
	case o.HamiCoreDir == "" || !filepath.IsAbs(o.HamiCoreDir):
		return fmt.Errorf("--hami-core-dir %q: want an absolute path", o.HamiCoreDir)
	case o.PollInterval <= 0 || o.RetryInterval <= 0:
		return errors.New("device plugin: poll and retry intervals must be positive")
	}
	return nil
}

// validResourceName accepts domain/name with a domain outside kubernetes.io, as kubelet requires of device plugins.
func validResourceName(s string) bool {
	domain, name, ok := strings.Cut(s, "/")
	return ok && domain != "" && name != "" && strings.Contains(domain, ".") && !strings.Contains(name, "/") &&
		!strings.HasSuffix(domain, "kubernetes.io")
}

// kubeletSocket is the path of kubelet's registration socket.
func (o Options) kubeletSocket() string { return filepath.Join(o.SocketDir, "kubelet.sock") }

// pluginSocket is the path of the plugin's own socket.
func (o Options) pluginSocket() string { return filepath.Join(o.SocketDir, o.SocketName) }
