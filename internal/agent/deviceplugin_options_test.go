package agent

import (
	"context"
	"errors"
	"testing"
	"time"
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
