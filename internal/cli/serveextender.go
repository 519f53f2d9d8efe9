package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// ServeExtenderOptions are the inputs of `kubectl hami serve-extender`.
type ServeExtenderOptions struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams

	Listen          string
	TLSCertFile     string
	TLSKeyFile      string
	SchedulerName   string
	DeviceConfigMap string
	ReleaseLock     bool
	Preemption      bool
	LeaderElect     bool
	LeaderLease     string
	EventInterval   time.Duration
	MaxBodyBytes    int64
	CardQuota       string

	// Client authentication and the webhook's own listener (issue 19).
	ClientCAFile            string
	ClientAllowedCNs        []string
	WebhookListen           string
	WebhookClientCAFile     string
	WebhookClientAllowedCNs []string
	MetricsAllowedCNs       []string
	CountBoundOnly          bool
	HAMiVersion             string
	KubeAPIQPS              float32
	KubeAPIBurst            int
}

func newServeExtenderCommand(config *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	d := extender.DefaultOptions()
	o := &ServeExtenderOptions{config: config, streams: streams}
	cmd := &cobra.Command{
		Use:   "serve-extender",
		Short: "Serve kube-scheduler's extender verbs (filter, prioritize, bind) and HAMi's webhook from the engine",
		Long: `serve-extender is a drop-in for HAMi's scheduler extender: kube-scheduler calls it for pods that ask for
HAMi's resources; it reads and writes HAMi's annotations, so it works on a cluster that HAMi already runs.
Endpoints: POST /filter, /prioritize, /bind, /webhook; GET /healthz, /readyz, /metrics.`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", ":8443", "address to serve on")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serve TLS with this certificate (with --tls-key-file)")
	f.StringVar(&o.TLSKeyFile, "tls-key-file", "", "private key of --tls-cert-file")
	f.StringVar(&o.SchedulerName, "scheduler-name", d.SchedulerName, "scheduler profile the webhook sends GPU pods to")
	f.StringVar(&o.DeviceConfigMap, "hami-configmap", snapshot.DefaultDeviceConfigMap, "namespace/name of HAMi's device ConfigMap (resource names and defaults)")
	f.BoolVar(&o.Preemption, "preemption", true, "preempt lower-priority pods for a GPU pod that fits nowhere (the leader evicts them itself when only GPUs are short), answer kube-scheduler's preempt verb with the nodes where the GPU request fits once the victims are gone, and hold freed GPUs for the nominated pod (false: none of this; kube-scheduler's candidates unchanged)")
	f.BoolVar(&o.ReleaseLock, "release-node-lock", false, "release hami.io/mutex.lock right after bind (when no HAMi device plugin consumes it)")
	f.BoolVar(&o.LeaderElect, "leader-elect", false, "with several replicas, only the holder of the Lease binds")
	f.StringVar(&o.LeaderLease, "leader-elect-lease", "kube-system/kubectl-hami-extender", "namespace/name of the leader election Lease")
	f.DurationVar(&o.EventInterval, "event-interval", d.EventInterval, "least time between two pending-reason events for one pod (0 disables them)")
	f.Int64Var(&o.MaxBodyBytes, "max-body-bytes", d.MaxBodyBytes, "largest filter, prioritize or bind body accepted; 0 sizes it from the cluster (node count x longest node name, with headroom, plus one pod); /webhook takes at most 3 MiB")
	f.Float32Var(&o.KubeAPIQPS, "kube-api-qps", extender.DefaultKubeAPIQPS, "API requests per second for binds (and, separately, for the informers); a bind takes 3 or 4; events have a budget of their own")
	f.IntVar(&o.KubeAPIBurst, "kube-api-burst", extender.DefaultKubeAPIBurst, "API request burst for binds (and, separately, for the informers)")
	f.StringVar(&o.HAMiVersion, "hami-version", engine.DefaultHAMiVersion, "the HAMi version whose device plugins and annotations the cluster runs: nodes it cannot read are flagged")
	f.StringVar(&o.CardQuota, "card-quota", engine.CardQuotaEnforce, "Volcano card-model quota (volcano.sh/card.quota) for pods naming volcano.sh/card.name and a queue: enforce or off")
	// Who may call: client certificates for the scheduler verbs, the webhook on its own listener.
	f.StringVar(&o.ClientCAFile, "client-ca-file", "", "serve /filter, /prioritize and /bind only to clients whose certificate this CA signed (kube-scheduler's extenders[].tlsConfig.certFile); others get 401")
	f.StringSliceVar(&o.ClientAllowedCNs, "client-allowed-cn", nil, "with --client-ca-file, also require one of these certificate common names (403 otherwise)")
	f.StringVar(&o.WebhookListen, "webhook-listen", "", "serve /webhook on this address, TLS with --tls-cert-file, for the API server; the main listener then refuses /webhook")
	f.StringVar(&o.WebhookClientCAFile, "webhook-client-ca-file", "", "with --webhook-listen, require a client certificate signed by this CA (the API server's, from its AdmissionConfiguration)")
	f.StringSliceVar(&o.WebhookClientAllowedCNs, "webhook-client-allowed-cn", []string{extender.DefaultWebhookClientCN}, "with --webhook-client-ca-file, the common names the API server's client certificate may have (403 otherwise: the CA alone would also admit kube-scheduler's certificate)")
	f.StringSliceVar(&o.MetricsAllowedCNs, "metrics-allowed-cn", nil, "with --client-ca-file, the common names that may read /metrics (default: any certificate that CA signed); without --client-ca-file /metrics is open")
	f.BoolVar(&o.CountBoundOnly, "count-bound-only", false, "count a pod's GPUs only while it is bound to the node hami.io/vgpu-node names, or is being bound (a deliberate difference from HAMi; see docs/compatibility.md)")
	return cmd
}

// serveConfig is the listeners' configuration from the flags.
func (o *ServeExtenderOptions) serveConfig() extender.ServeConfig {
	return extender.ServeConfig{Addr: o.Listen, CertFile: o.TLSCertFile, KeyFile: o.TLSKeyFile, ClientCAFile: o.ClientCAFile,
		AllowedCNs: o.ClientAllowedCNs, WebhookAddr: o.WebhookListen, WebhookClientCAFile: o.WebhookClientCAFile,
		WebhookAllowedCNs: o.WebhookClientAllowedCNs, MetricsAllowedCNs: o.MetricsAllowedCNs}
}

// Complete has nothing to fill: serve-extender reads its flags as they are.
func (o *ServeExtenderOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks flag combinations.
func (o *ServeExtenderOptions) Validate() error {
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return fmt.Errorf("--tls-cert-file and --tls-key-file go together")
	}
	if _, err := engine.ParseHAMiVersion(o.HAMiVersion); err != nil {
		return fmt.Errorf("--hami-version: %w", err)
	}
	if o.CardQuota != engine.CardQuotaEnforce && o.CardQuota != engine.CardQuotaOff {
		return fmt.Errorf("--card-quota %q: want enforce or off", o.CardQuota)
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		return fmt.Errorf("--kube-api-qps %v and --kube-api-burst %d: want both above 0", o.KubeAPIQPS, o.KubeAPIBurst)
	}
	if o.MaxBodyBytes < 0 {
		return fmt.Errorf("--max-body-bytes %d: want 0 (sized from the cluster) or a byte count", o.MaxBodyBytes)
	}
	if !strings.Contains(o.LeaderLease, "/") {
		return fmt.Errorf("--leader-elect-lease %q: want namespace/name", o.LeaderLease)
	}
	if err := o.serveConfig().Validate(); err != nil {
		return fmt.Errorf("--client-ca-file, --client-allowed-cn, --webhook-listen, --webhook-client-ca-file, --metrics-allowed-cn: %w", err)
	}
	return nil
}

// Run serves until ctx ends or the process gets SIGINT or SIGTERM.
func (o *ServeExtenderOptions) Run(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(o.streams.ErrOut, nil))
	rc, err := o.config.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	clients, err := extender.NewClients(rc, o.KubeAPIQPS, o.KubeAPIBurst)
	if err != nil {
		return err
	}
	cs := clients.Bind
	cfg := engine.DefaultConfig()
	if ns, name, ok := strings.Cut(o.DeviceConfigMap, "/"); ok {
		if cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			if cfg, err = snapshot.DeviceConfig(cm, cfg); err != nil {
				log.Warn("HAMi device ConfigMap", "err", err)
			}
		}
	}
	cfg.CardQuota, cfg.HAMiVersion = o.CardQuota, o.HAMiVersion
	cfg.CountBoundOnly = o.CountBoundOnly
	state := extender.NewState(cfg)
	opts := extender.DefaultOptions()
	opts.SchedulerName, opts.ReleaseLockAfterBind, opts.EventInterval, opts.MaxBodyBytes = o.SchedulerName, o.ReleaseLock, o.EventInterval, o.MaxBodyBytes
	opts.DisablePreemption = !o.Preemption
	opts.EventClient = clients.Events
	if o.LeaderElect {
		leader := &extender.Leader{}
		opts.IsLeader = leader.IsLeader
		ns, name, _ := strings.Cut(o.LeaderLease, "/")
		host, _ := os.Hostname()
		go leader.Run(ctx, cs, ns, name, host+"-"+fmt.Sprint(os.Getpid()), log)
	}
	srv := extender.NewServer(state, cs, opts, log, time.Now)
	if _, err := extender.StartInformers(ctx, clients.Watch, state, time.Now); err != nil {
		return fmt.Errorf("cannot watch the cluster at %s: %w", rc.Host, err)
	}
	// Placements and node locks left by a crashed or abandoned bind are taken back within seconds.
	go srv.RunJanitor(ctx, time.Second)
	// HAMi's registration pass stamps every node's handshake; the 60 s grace of a node whose device plugin does
	// not serve starts there.
	go srv.RunHandshakeStamper(ctx, extender.HandshakeStampInterval)
	// Pods that fit nowhere only for want of GPUs, which kube-scheduler's own preemption never helps.
	go srv.RunPreemptor(ctx)
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	volcano, err := extender.StartVolcanoInformers(ctx, dyn, state, log)
	if err != nil {
		return fmt.Errorf("cannot watch Volcano queues at %s: %w", rc.Host, err)
	}
	log.Info("card quota", "mode", o.CardQuota, "volcano", volcano)
	sc := o.serveConfig()
	if sc.Unauthenticated() {
		log.Warn("UNAUTHENTICATED: anyone who can reach " + o.Listen + " can call /filter, /prioritize and /bind (and so bind any pending GPU pod to any node) " +
			"and /webhook; set --client-ca-file to kube-scheduler's client CA and --webhook-listen (see docs/deploy.md, Security)")
	}
	log.Info("serving", "listen", o.Listen, "tls", o.TLSCertFile != "", "clientCA", o.ClientCAFile != "", "allowedCNs", o.ClientAllowedCNs,
		"webhookListen", o.WebhookListen, "countBoundOnly", o.CountBoundOnly, "cluster", rc.Host, "schedulerName", o.SchedulerName,
		"kubeAPIQPS", o.KubeAPIQPS, "kubeAPIBurst", o.KubeAPIBurst)
	return srv.ServeWith(ctx, sc)
}
