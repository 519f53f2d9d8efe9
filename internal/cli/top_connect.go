package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-hami/kubectl-hami/internal/tui"
)

// runUIConnecting opens the terminal UI at once on a live cluster: it says which API server it is asking
// while the first list runs, and shows the error (and retries) when the API server does not answer, instead
// of a blank terminal until the client gives up.
// `:ctx NAME` in the UI ends it with tui.SwitchContext: it starts again on that kubeconfig context.
func (o *TopOptions) runUIConnecting(ctx context.Context) error {
	for {
		err := o.runUIConnectingOnce(ctx)
		var sw *tui.SwitchContext
		if !errors.As(err, &sw) {
			return err
		}
		o.read.config = withContext(o.read.config, sw.Context)
	}
}

// withContext is the kubeconfig flags on another context: the same kubeconfig file and namespace, without the
// cluster and user overrides that would pin the old context's.
func withContext(f *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	out := genericclioptions.NewConfigFlags(true)
	out.KubeConfig, out.Namespace, out.Timeout = f.KubeConfig, f.Namespace, f.Timeout
	out.Context = &name
	return out
}

func (o *TopOptions) runUIConnectingOnce(ctx context.Context) error {
	opts := tui.Options{DeviceConfigMap: o.read.deviceConfigMap, HAMiVersion: o.read.hamiVersion, Namespace: o.read.namespace(), OnlyNamespace: o.read.onlyNamespace(), Now: o.now,
		NoColor: tui.NoColorFromEnv(), Output: o.streams.Out, Agents: o.agents()}
	rc, err := o.read.config.ToRESTConfig()
	if err != nil { // no try would do better: say it now, in the terminal
		return fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	opts.Server = rc.Host
	if c := o.read.config.Context; c != nil && *c != "" {
		opts.Context = *c
	} else if raw, err := o.read.config.ToRawKubeConfigLoader().RawConfig(); err == nil {
		opts.Context = raw.CurrentContext
	}
	opts.User = o.kubeUser(opts.Context)
	if raw, err := o.read.config.ToRawKubeConfigLoader().RawConfig(); err == nil {
		for name := range raw.Contexts {
			opts.Contexts = append(opts.Contexts, name)
		}
		slices.Sort(opts.Contexts)
	}
	opts.Load = func(ctx context.Context) (tui.Loaded, error) {
		s, err := o.read.load(ctx)
		if err != nil {
			return tui.Loaded{}, err
		}
		return tui.Loaded{Snapshot: s, Client: o.read.watchClient, Dynamic: o.read.watchDynamic}, nil // informers: no request timeout
	}
	return tui.Run(ctx, opts)
}

// kubeUser is the kubeconfig user the UI connects as (--user, else the context's), for the header when the API
// server refuses its credentials; "" when the kubeconfig does not say.
func (o *TopOptions) kubeUser(context string) string {
	if u := o.read.config.AuthInfoName; u != nil && *u != "" {
		return *u
	}
	if raw, err := o.read.config.ToRawKubeConfigLoader().RawConfig(); err == nil {
		if c := raw.Contexts[context]; c != nil {
			return c.AuthInfo
		}
	}
	return ""
}
