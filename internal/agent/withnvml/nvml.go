//go:build linux && cgo && nvml && kustomize_disable_go_plugin_support

package withnvml

import (
	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/nvmlsource"
)

func init() {
	agent.RegisterNVML(nvmlsource.New)
	agent.RegisterDevicePlugin(deviceplugin.ForAgent)
}
