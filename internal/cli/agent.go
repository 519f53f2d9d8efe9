package cli

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	// NVML, in binaries built with -tags nvml,kustomize_disable_go_plugin_support (agent.BuildTags).
	_ "github.com/kubectl-hami/kubectl-hami/internal/agent/withnvml"
)

// newAgentCommand builds `kubectl hami agent`, the node agent that runs as a DaemonSet on GPU nodes.
func newAgentCommand(config *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	flags := agent.NewCommandFlags()
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the node agent: register this node's GPUs in HAMi's format and serve their live usage",
		Long: `agent runs on every GPU node (deploy/agent has the DaemonSet). It reads the GPUs through NVML, writes
hami.io/node-nvidia-register on its own Node (--mode=full; --mode=observe leaves registration to HAMi's device
plugin), marks GPUs unhealthy on critical XID events, and serves live usage on --listen:
  /metrics   Prometheus (hami_host_gpu_memory_used_bytes, hami_host_gpu_utilization_ratio, ...)
  /usage     JSON per GPU, with processes mapped to pods
  /devices   the registration it builds; /healthz, /readyz
With --device-plugin it is also kubelet's device plugin for nvidia.com/gpu, replacing HAMi's: split-count
virtual devices per GPU with their XID health, and Allocate hands each container the GPUs the scheduler
extender wrote in hami.io/vgpu-devices-to-allocate, with HAMi-core's environment and mounts (--hami-core-dir).
Every flag can also be set with HAMI_AGENT_<FLAG> (--device-split-count: HAMI_AGENT_DEVICE_SPLIT_COUNT); the
node name defaults to $NODE_NAME. The entry for this node in --configmap (HAMi's hami-device-plugin format)
overrides the flags. The agent runs on Linux GPU nodes only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !agent.NVMLSupported() {
				// "runs on Linux GPU nodes", and how to get a binary that does.
				_, err := agent.NewNVMLSource(agent.NVMLOptions{})
				return err
			}
			if err := flags.ApplyEnv(os.LookupEnv); err != nil {
				return err
			}
			opts, nvmlOpts, err := flags.Options(os.Getenv("DP_DISABLE_HEALTHCHECKS"))
			if err != nil {
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(flags.LogLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", flags.LogLevel)
			}
			log := slog.New(slog.NewJSONHandler(streams.ErrOut, &slog.HandlerOptions{Level: level}))
			opts.Log, nvmlOpts.Log = log, log

			src, err := agent.NewNVMLSource(nvmlOpts)
			if err != nil {
				if flags.FailOnInitError {
					return err
				}
				log.Warn("NVML cannot start; running with no GPUs (--fail-on-init-error=false)", "err", err)
				src = agent.NullSource{}
			}
			defer src.Close()

			rc, err := config.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("cannot load the kubeconfig (in a pod: the ServiceAccount): %w", err)
			}
			rc.UserAgent = "kubectl-hami-agent/" + opts.NodeName
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			a, err := agent.New(src, cs, opts)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return a.Run(ctx)
		},
	}
	cmd.Flags().AddFlagSet(flags.FlagSet())
	return cmd
}
