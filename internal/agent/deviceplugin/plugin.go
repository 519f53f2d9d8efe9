package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/client-go/kubernetes"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Plugin is the device plugin of one node. Run serves it; kubelet calls the gRPC methods.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	src    Source
	client kubernetes.Interface
	opts   Options
	log    *slog.Logger

	mu      sync.Mutex
	devices []*pluginapi.Device
	changed chan struct{} // closed and replaced whenever devices change: wakes every ListAndWatch

	allocMu  sync.Mutex // Allocates take turns: each consumes the next entry of one pod's annotation
	arrivals arrivals   // the order in which the node's pods were bound, kubelet's order of admission
}

// New builds a Plugin over the agent's registration src; client reads and patches this node's pods and Node.
func New(src Source, client kubernetes.Interface, opts Options) (*Plugin, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if src == nil || client == nil {
		return nil, errors.New("device plugin: a device source and a Kubernetes client are needed")
	}
	p := &Plugin{src: src, client: client, opts: opts, log: opts.Log, changed: make(chan struct{})}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.log = p.log.With("component", "device-plugin", "resource", opts.ResourceName)
	return p, nil
}

// Run waits for the agent's first scan, then serves the plugin's socket and registers with kubelet, again
// whenever kubelet restarts, until ctx ends. It returns an error only when the socket cannot be served at all.
func (p *Plugin) Run(ctx context.Context) error {
	updates := p.src.Subscribe()
	select {
	case <-ctx.Done():
		return nil
	case devs := <-updates:
		p.setDevices(devs)
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case devs := <-updates:
				p.setDevices(devs)
			}
		}
	}()
	go p.cleanupLoop(ctx)
	if p.opts.Mig != nil {
		go p.migReconcileLoop(ctx)
	}
	go p.watchArrivals(ctx)
	for ctx.Err() == nil {
		if err := p.serveOnce(ctx); err != nil {
			return err
		}
	}
	return nil
}

// setDevices publishes a new registration to the ListAndWatch streams when kubelet would see a difference.
func (p *Plugin) setDevices(devs []codec.DeviceInfo) {
	next := virtualDevices(devs)
	p.mu.Lock()
	defer p.mu.Unlock()
	if sameDevices(next, p.devices) {
		return
	}
	healthy := 0
	for _, d := range next {
		if d.Health == pluginapi.Healthy {
			healthy++
		}
	}
	p.log.Info("device list changed", "devices", len(next), "healthy", healthy)
	p.devices = next
	close(p.changed)
	p.changed = make(chan struct{})
}

// snapshot is the current device list and the channel that closes when it changes.
func (p *Plugin) snapshot() ([]*pluginapi.Device, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.devices, p.changed
}

// serveOnce serves the socket and registers, then returns when kubelet restarted (nil) or ctx ended (nil).
func (p *Plugin) serveOnce(ctx context.Context) error {
	sock := pluginSocket(p.opts)
	if err := os.MkdirAll(p.opts.SocketDir, 0o750); err != nil {
		return fmt.Errorf("device plugin: %w", err)
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("device plugin: cannot remove the stale socket: %w", err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("device plugin: cannot listen on %s: %w", sock, err)
	}
	own, err := os.Stat(sock)
	if err != nil {
		ln.Close()
		return fmt.Errorf("device plugin: %w", err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil {
			p.log.Warn("device plugin server stopped", "err", err)
		}
	}()
	defer func() {
		// Stop ends the ListAndWatch streams, so kubelet sees the plugin go away at once.
		srv.Stop()
		<-served
		if cur, err := os.Stat(sock); err == nil && os.SameFile(cur, own) {
			_ = os.Remove(sock)
		}
	}()

	kubelet, ok := p.registerUntilDone(ctx, own)
	if !ok {
		return nil
	}
	p.log.Info("registered with kubelet", "socket", sock)
	tick := time.NewTicker(p.opts.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if why := p.restartReason(kubelet, own); why != "" {
			p.log.Info("re-registering with kubelet", "why", why)
			return nil
		}
	}
}

// registerUntilDone registers with kubelet, retrying until it succeeds; it returns kubelet.sock as it was when
// registered, or false when ctx ended or the plugin's own socket was removed meanwhile.
func (p *Plugin) registerUntilDone(ctx context.Context, own os.FileInfo) (os.FileInfo, bool) {
	for {
		kubelet, err := os.Stat(kubeletSocket(p.opts))
		if err == nil {
			if err = p.register(ctx); err == nil {
				return kubelet, true
			}
		}
		p.log.Warn("cannot register with kubelet; retrying", "socket", kubeletSocket(p.opts), "err", err,
			"in", p.opts.RetryInterval.String())
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(p.opts.RetryInterval):
		}
		if cur, err := os.Stat(pluginSocket(p.opts)); err != nil || !os.SameFile(cur, own) {
			return nil, false // kubelet cleaned the folder: serve a fresh socket
		}
	}
}

// register calls kubelet's Registration service once.
func (p *Plugin) register(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+kubeletSocket(p.opts), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     p.opts.SocketName,
		ResourceName: p.opts.ResourceName,
		Options:      p.options(),
	})
	return err
}

// restartReason says why the plugin must serve and register again, or "" while all is well: kubelet recreates
// kubelet.sock when it restarts and deletes the plugins' sockets.
func (p *Plugin) restartReason(kubelet, own os.FileInfo) string {
	if cur, err := os.Stat(pluginSocket(p.opts)); err != nil || !os.SameFile(cur, own) {
		return "the plugin's socket was removed (kubelet restarted)"
	}
	if cur, err := os.Stat(kubeletSocket(p.opts)); err != nil || !os.SameFile(cur, kubelet) {
		return "kubelet.sock was recreated (kubelet restarted)"
	}
	return ""
}
