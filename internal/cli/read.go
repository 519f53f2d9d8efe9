package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/examples"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// APIVersion is the apiVersion of the objects read commands print with -o json|yaml.
const APIVersion = "kubectl-hami.io/v1alpha1"

// readFlags are the flags every read command shares: where the cluster comes from.
type readFlags struct {
	config          *genericclioptions.ConfigFlags
	snapshotPath    string
	demo            bool
	deviceConfigMap string
	// hamiVersion is the HAMi version whose scheduler runs beside (or instead of) kubectl-hami.
	hamiVersion   string
	schedulerName string
	stdin         io.Reader // --snapshot - and -f -
	// allNamespaces is -A/--all-namespaces, on the commands that take it (addAllNamespacesFlag).
	allNamespaces bool
	// client and dynamic are set once load has connected to a live cluster; each request is bounded by the
	// request timeout. watchClient and watchDynamic are the same without it, for informers (the terminal UI):
	// a watch lasts as long as the UI.
	client       kubernetes.Interface
	dynamic      dynamic.Interface
	watchClient  kubernetes.Interface
	watchDynamic dynamic.Interface
	// cmd is the command the flags belong to (whether --request-timeout was given).
	cmd *cobra.Command
}

// defaultReadTimeout bounds each API request of a read command unless --request-timeout is given: an API
// server that accepts the connection and then stalls must not hang why-pending, top, what-if or snapshot.
const defaultReadTimeout = 30 * time.Second

// requestTimeout is --request-timeout when given (kubectl's flag; 0 waits forever), else defaultReadTimeout.
func (r *readFlags) requestTimeout(rc *rest.Config) time.Duration {
	if r.cmd != nil {
		if f := r.cmd.Flag("request-timeout"); f != nil && f.Changed {
			return rc.Timeout
		}
	}
	return defaultReadTimeout
}

// stalled rewords a request that ran out of time: the API server took the connection but did not answer.
func stalled(err error, host string, timeout time.Duration) error {
	var ne net.Error
	if err == nil || timeout <= 0 || !(errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		strings.Contains(err.Error(), "Client.Timeout exceeded")) {
		return err
	}
	return fmt.Errorf("the API server at %s did not answer within %s: it is stalled or overloaded (--request-timeout sets how long to wait; 0 waits forever): %w",
		host, timeout, err)
}

func (r *readFlags) addFlags(cmd *cobra.Command) {
	r.cmd = cmd
	cmd.Flags().StringVar(&r.snapshotPath, "snapshot", "", "read a saved snapshot (a List or multi-document YAML/JSON; - for standard input) instead of the cluster")
	cmd.Flags().BoolVar(&r.demo, "demo", false, "use the embedded demo cluster instead of the cluster")
	cmd.Flags().StringVar(&r.schedulerName, "scheduler-name", engine.DefaultSchedulerName, "HAMi's scheduler profile: only pods addressed to it get HAMi's gates; volcano's get the standard checks and the queue's card quota, others the standard checks")
	cmd.Flags().StringVar(&r.deviceConfigMap, "hami-configmap", snapshot.DefaultDeviceConfigMap, "namespace/name of HAMi's device ConfigMap (resource names and defaults)")
	cmd.Flags().StringVar(&r.hamiVersion, "hami-version", engine.DefaultHAMiVersion, "the HAMi version whose scheduler runs in the cluster: nodes whose annotations it cannot read are flagged")
}

// addAllNamespacesFlag adds kubectl's -A/--all-namespaces.
func (r *readFlags) addAllNamespacesFlag(cmd *cobra.Command, usage string) {
	cmd.Flags().BoolVarP(&r.allNamespaces, "all-namespaces", "A", false, usage)
}

// onlyNamespace is the namespace a cluster-wide command (top, lint) is limited to: the -n given on the command
// line, or "" for every namespace (no -n, or -A, which wins over -n as in kubectl).
func (r *readFlags) onlyNamespace() string {
	if r.allNamespaces || r.config.Namespace == nil {
		return ""
	}
	return *r.config.Namespace
}

func (r *readFlags) validate() error {
	if r.demo && r.snapshotPath != "" {
		return fmt.Errorf("--demo and --snapshot are exclusive")
	}
	if r.deviceConfigMap != "" && !strings.Contains(r.deviceConfigMap, "/") {
		return fmt.Errorf("--hami-configmap %q: want namespace/name", r.deviceConfigMap)
	}
	if r.hamiVersion != "" {
		if _, err := engine.ParseHAMiVersion(r.hamiVersion); err != nil {
			return fmt.Errorf("--hami-version: %w", err)
		}
	}
	return nil
}

func (r *readFlags) live() bool { return !r.demo && r.snapshotPath == "" }

// load reads the snapshot from the demo, a file or the cluster.
func (r *readFlags) load(ctx context.Context) (*snapshot.Snapshot, error) {
	switch {
	case r.demo:
		return snapshot.Parse(examples.DemoCluster, "demo-cluster.yaml (embedded)")
	case r.snapshotPath == "-":
		return snapshot.LoadReader(r.stdin, "standard input")
	case r.snapshotPath != "":
		return snapshot.LoadFile(r.snapshotPath)
	}
	rc, err := r.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load the kubeconfig: %w", err)
	}
	// A read lists whole clusters in pages; client-go's default 5 requests/s would make waiting the main cost.
	rc.QPS, rc.Burst = 100, 200
	watch := rest.CopyConfig(rc)
	watch.Timeout = 0
	timeout := r.requestTimeout(rc)
	rc.Timeout = timeout
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cannot build a client for %s: %w", rc.Host, err)
	}
	r.client = cs
	if r.watchClient, err = kubernetes.NewForConfig(watch); err != nil {
		return nil, fmt.Errorf("cannot build a client for %s: %w", rc.Host, err)
	}
	// The schedulers' leader Leases say whether a scheduler runs (why-pending's "why it may still be Pending").
	leases := query.SchedulerLeases(r.schedulerName)
	if r.schedulerName != corev1.DefaultSchedulerName {
		leases = append(leases, query.SchedulerLeases(corev1.DefaultSchedulerName)...)
	}
	s, err := snapshot.Live(ctx, cs, snapshot.LiveOptions{DeviceConfigMap: r.deviceConfigMap, Server: rc.Host, Leases: leases})
	if err != nil {
		return nil, needsReaderRole(stalled(err, rc.Host, timeout), rc.Host) // forbidden.go
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cannot build a client for %s: %w", rc.Host, err)
	}
	r.dynamic = dyn
	if r.watchDynamic, err = dynamic.NewForConfig(watch); err != nil {
		return nil, fmt.Errorf("cannot build a client for %s: %w", rc.Host, err)
	}
	if err := snapshot.LiveVolcano(ctx, dyn, s, rc.Host); err != nil {
		return nil, needsReaderRole(stalled(err, rc.Host, timeout), rc.Host)
	}
	return s, nil
}

// namespace is -n, else the kubeconfig's namespace for a live cluster, else "default".
func (r *readFlags) namespace() string {
	if r.config.Namespace != nil && *r.config.Namespace != "" {
		return *r.config.Namespace
	}
	if r.live() {
		if ns, _, err := r.config.ToRawKubeConfigLoader().Namespace(); err == nil && ns != "" {
			return ns
		}
	}
	return "default"
}

// cluster builds the engine model with the flags' HAMi ConfigMap, scheduler profile and HAMi version, and reports
// bad input as warnings that name the object and field.
func cluster(s *snapshot.Snapshot, r *readFlags, errOut io.Writer) (*engine.Cluster, engine.Config) {
	cfg, err := s.Config(r.deviceConfigMap)
	if err != nil {
		fmt.Fprintf(errOut, "warning: %v\n", err)
	}
	if r.schedulerName != "" {
		cfg.SchedulerName = r.schedulerName
	}
	if r.hamiVersion != "" {
		cfg.HAMiVersion = r.hamiVersion
	}
	c, problems := s.Cluster(cfg)
	warnProblems(errOut, problems)
	return c, cfg
}

const maxWarnings = 10

func warnProblems(errOut io.Writer, problems []engine.Problem) {
	for i, p := range problems {
		if i == maxWarnings {
			fmt.Fprintf(errOut, "warning: %d more problems (see -o json)\n", len(problems)-maxWarnings)
			break
		}
		fmt.Fprintf(errOut, "warning: %s\n", p)
	}
}

// podNotFound says the pod is missing and suggests the closest names.
func podNotFound(s *snapshot.Snapshot, ns, name string) error {
	var inNS, elsewhere []string
	for pns, pname := range s.Pods.Names() {
		if pns == ns {
			inNS = append(inNS, pname)
		} else if pname == name {
			elsewhere = append(elsewhere, pns+"/"+pname)
		}
	}
	sort.Strings(inNS)
	var sugg []string
	for _, m := range resolve.Closest(name, inNS, 5) { // typos and fuzzy matches (internal/resolve)
		sugg = append(sugg, ns+"/"+m)
	}
	msg := fmt.Sprintf("pod %s/%s not found in %s", ns, name, s.Source)
	if len(elsewhere) > 0 {
		msg += "; a pod of that name is in " + strings.Join(elsewhere, ", ") + " (use -n)"
	}
	if len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, ", ") + "?"
	}
	if len(inNS) == 0 && len(elsewhere) == 0 {
		msg += fmt.Sprintf("; namespace %s has no pods", ns)
	}
	return fmt.Errorf("%s", msg)
}

// printObject writes v as JSON or YAML.
func printObject(w io.Writer, format string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		y, err := yaml.JSONToYAML(js)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", js)
	return err
}

func validateOutput(o string, allowed ...string) error {
	for _, a := range allowed {
		if o == a {
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q (want one of: %s)", o, strings.Join(allowed[1:], ", "))
}

// podName accepts a pod the ways kubectl does: NAME, pod/NAME, pods/NAME or po/NAME.
func podName(arg string) (string, error) {
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		return arg, nil
	}
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
		if name == "" {
			return "", fmt.Errorf("%q names no pod", arg)
		}
		return name, nil
	}
	return "", fmt.Errorf("%q is not a pod: only pods are explained (pod/NAME or NAME)", arg)
}
