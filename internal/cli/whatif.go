package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// WhatIfOptions are the inputs of `kubectl hami what-if`.
type WhatIfOptions struct {
	readOptions

	Output      string
	File        string
	Name        string
	GPUs        int64
	GPUMem      int64
	GPUMemPct   int64
	GPUCores    int64
	Device      string
	Annotations []string
	Card        string
	Queue       string
	Count       int
	Nodes       []string
	ExitCode    bool

	namespace string
	pods      []whatIfPod
}

// whatIfPod is one hypothetical pod: from the flags, or one workload of the manifest.
type whatIfPod struct {
	pod   *corev1.Pod
	count int
}

func newWhatIfCommand(read *readFlags, streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	o := &WhatIfOptions{readOptions: readOptions{read: read, streams: streams, now: now}}
	cmd := &cobra.Command{
		Use:   "what-if",
		Short: "Check where a GPU pod that does not exist yet would land, and how many copies fit now",
		Example: `  kubectl hami what-if --gpus 2 --gpumem 20000 --gpucores 30 -n ml-research
  kubectl hami what-if -f deployment.yaml
  kubectl hami what-if --gpus 1 --gpumem-percentage 50 --annotation nvidia.com/use-gputype=A100 --count 10`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "output format: wide, json or yaml")
	f.StringVarP(&o.File, "filename", "f", "", "a manifest of Pods, Deployments, StatefulSets, Jobs or ReplicaSets, every document (their templates and replicas are used); - for standard input")
	f.StringVar(&o.Name, "name", "what-if", "name of the hypothetical pod")
	f.Int64Var(&o.GPUs, "gpus", 1, "GPUs per pod (nvidia.com/gpu)")
	f.Var(mibFlag{&o.GPUMem}, "gpumem", "GPU memory per GPU in MiB (nvidia.com/gpumem), a whole number")
	f.Int64Var(&o.GPUMemPct, "gpumem-percentage", 0, "GPU memory per GPU in percent (nvidia.com/gpumem-percentage)")
	f.Int64Var(&o.GPUCores, "gpucores", -1, "GPU cores per GPU in percent (nvidia.com/gpucores)")
	f.StringVar(&o.Device, "device", "", "device type other than NVIDIA GPUs: a vendor (hygon, cambricon) or a type (ascend910b3, dcu, mlu, mr-v100); --gpus, --gpumem and --gpucores then set its count, memory (in its own unit) and cores")
	f.StringArrayVar(&o.Annotations, "annotation", nil, "pod annotation key=value (repeatable), e.g. nvidia.com/use-gputype=A100")
	f.StringVar(&o.Card, "card", "", "Volcano card model(s) the pod may use, preferred first: \"NVIDIA-H200\" or \"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D\" (volcano.sh/card.name)")
	f.StringVar(&o.Queue, "queue", "", "Volcano queue whose card quota the pod draws on (scheduling.volcano.sh/queue-name)")
	f.IntVar(&o.Count, "count", 0, "copies wanted (default: the manifest's replicas, else 1)")
	f.StringSliceVar(&o.Nodes, "node", nil, "show every gate for every GPU of these nodes")
	f.BoolVar(&o.ExitCode, "exit-code", false, "exit 1 when a pod would not fit, or fewer copies fit than wanted (for CI)")
	return cmd
}

// Complete builds the hypothetical pods from the flags or the manifest, and warns for every flag the manifest
// makes irrelevant.
func (o *WhatIfOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.namespace = o.read.namespace()
	if o.File != "" {
		pods, err := o.podsFromFile(cmd.Flags().Changed("namespace"))
		if err != nil {
			return err
		}
		o.pods = pods
		for _, name := range []string{"gpus", "gpumem", "gpumem-percentage", "gpucores", "device", "name"} {
			if cmd.Flags().Changed(name) {
				fmt.Fprintf(o.streams.ErrOut, "warning: --%s is ignored with -f: the manifest's pod template decides\n", name)
			}
		}
	} else {
		pod, err := o.podFromFlags(engine.DefaultConfig().Kinds())
		if err != nil {
			return err
		}
		o.pods = []whatIfPod{{pod: pod, count: 1}}
	}
	for i := range o.pods {
		if o.Count > 0 {
			o.pods[i].count = o.Count
		}
		if o.pods[i].count <= 0 {
			o.pods[i].count = 1
		}
	}
	for _, a := range o.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return fmt.Errorf("--annotation %q: want key=value", a)
		}
		o.annotate(k, v)
	}
	if o.Card != "" {
		o.annotate(codec.CardNameAnnotation, o.Card)
	}
	if o.Queue != "" {
		o.annotate(codec.QueueNameAnnotation, o.Queue)
	}
	return nil
}

func (o *WhatIfOptions) annotate(k, v string) {
	for _, p := range o.pods {
		if p.pod.Annotations == nil {
			p.pod.Annotations = map[string]string{}
		}
		p.pod.Annotations[k] = v
	}
}

// podsFromFile reads every document of -f (standard input for -); documents that are not a Pod or a
// workload are named in a warning, never silently dropped.
func (o *WhatIfOptions) podsFromFile(nsFlag bool) ([]whatIfPod, error) {
	var r io.Reader
	name := o.File
	if o.File == "-" {
		r, name = o.read.stdin, "standard input"
	} else {
		f, err := os.Open(o.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := snapshot.ReadCapped(r, name, 64<<20)
	if err != nil {
		return nil, err
	}
	var out []whatIfPod
	for i, doc := range splitDocuments(data) {
		pod, replicas, err := podFromManifest(doc, fmt.Sprintf("%s (document %d)", name, i+1))
		if errors.Is(err, errNotWorkload) {
			fmt.Fprintf(o.streams.ErrOut, "warning: %v: ignored\n", err)
			continue
		}
		if err != nil {
			return nil, err
		}
		if nsFlag || pod.Namespace == "" {
			pod.Namespace = o.namespace
		}
		out = append(out, whatIfPod{pod: pod, count: replicas})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no Pod, Deployment, StatefulSet, Job or ReplicaSet", name)
	}
	return out, nil
}

// splitDocuments cuts a YAML stream at "---" lines and drops empty documents; JSON is one document.
func splitDocuments(data []byte) [][]byte {
	var out [][]byte
	var cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		cur = nil
		trimmed := strings.TrimSpace(doc)
		for _, l := range strings.Split(trimmed, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, []byte(doc))
				return
			}
		}
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "---") && strings.TrimSpace(strings.TrimLeft(l, "-")) == "" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// Validate checks the numbers and flag combinations.
func (o *WhatIfOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	if err := validateOutput(o.Output, "", "wide", "json", "yaml"); err != nil {
		return err
	}
	switch {
	case o.File == "" && o.GPUs <= 0:
		return fmt.Errorf("--gpus %d: want at least 1", o.GPUs)
	case o.GPUMem < 0:
		return fmt.Errorf("--gpumem %d: want MiB above 0", o.GPUMem)
	case o.GPUMemPct < 0 || o.GPUMemPct > 100:
		return fmt.Errorf("--gpumem-percentage %d: want 1-100", o.GPUMemPct)
	case o.GPUCores > 100:
		return fmt.Errorf("--gpucores %d: want 0-100", o.GPUCores)
	case o.Count < 0:
		return fmt.Errorf("--count %d: want at least 1", o.Count)
	}
	if o.Card != "" {
		if _, err := codec.ParseCardName(o.Card); err != nil {
			return fmt.Errorf("--card %q: %w", o.Card, err)
		}
		for _, p := range o.pods {
			a := p.pod.Annotations
			if a[codec.QueueNameAnnotation] == "" && a[codec.GroupNameAnnotation] == "" {
				return fmt.Errorf("--card %q needs --queue: a card quota is a Volcano queue's (volcano.sh/card.quota), and pod %s names no queue or PodGroup", o.Card, p.pod.Name)
			}
		}
	}
	return nil
}

// podFromFlags is the hypothetical pod of the flags (query.WhatIfPod), with the resource names of kinds: --device
// picks another device type. Complete builds it with the chart's defaults, to refuse bad flags before reading
// the cluster; Run builds it again with the cluster's names, as the UI's form does.
func (o *WhatIfOptions) podFromFlags(kinds []device.Kind) (*corev1.Pod, error) {
	spec := query.WhatIfPod{Namespace: o.namespace, Name: o.Name, Device: o.Device, Count: o.GPUs, Memory: o.GPUMem,
		MemoryPercent: o.GPUMemPct, Cores: o.GPUCores}
	pod, err := spec.Pod(kinds)
	var fe *query.FieldError
	if errors.As(err, &fe) {
		return nil, fmt.Errorf("--%s: %w", whatIfFlags[fe.Field], fe.Err)
	}
	return pod, err
}

// whatIfFlags name query.WhatIfPod's fields in the flags' words.
var whatIfFlags = map[string]string{query.FieldDevice: "device", query.FieldMemory: "gpumem",
	query.FieldMemoryPercent: "gpumem-percentage", query.FieldCores: "gpucores"}

// WhatIf is the -o json|yaml form of the answer.
type WhatIf struct {
	APIVersion string `json:"apiVersion"` // kubectl-hami.io/v1alpha1
	Kind       string `json:"kind"`       // WhatIf; several pods (-f with many documents) are a v1 List of them
	// Admission is what HAMi's mutating webhook would change in the pod before it is scheduled.
	Admission []string `json:"admission,omitempty"`
	// Refusal is set when HAMi's admission webhook would not even create the pod.
	Refusal *engine.WebhookRefusal `json:"webhookRefusal,omitempty"`
	// Verdict is the engine's answer: every gate on every node, the placement or the fixes proven.
	Verdict *engine.Verdict `json:"verdict"`
	// Wanted is the copies asked for (--count, else the manifest's replicas, else 1).
	Wanted int `json:"wanted"`
	// Capacity is how many copies fit now, where, and the quota that stops the next one.
	Capacity engine.Capacity `json:"capacity"`
	// Kubernetes is kube-scheduler's own checks per node (resources, taints, selectors), before HAMi's gates.
	Kubernetes []kubefit.NodeResult `json:"kubernetes,omitempty"`
	// Preemption is the preemption that would make the pod fit, by its priority (preempt.go).
	Preemption *preempt.Answer `json:"preemption,omitempty"`
}

// errWouldNotFit makes what-if --exit-code exit 1.
var errWouldNotFit = errors.New("what-if: not every pod would fit (--exit-code)")

// Run evaluates the hypothetical pods against the cluster, one after the other, each on the cluster as it is.
func (o *WhatIfOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	// A mistyped node, namespace, queue or card is refused with the names meant (names.go), never explained.
	if o.Nodes, err = resolveNodes(s, o.Nodes); err != nil {
		return err
	}
	for _, p := range o.pods {
		if err := checkNamespace(ctx, o.read, s, p.pod.Namespace, o.streams.ErrOut); err != nil {
			return err
		}
	}
	if err := checkQueue(s, o.Queue); err != nil {
		return err
	}
	c, cfg := cluster(s, o.read, o.streams.ErrOut)
	if o.File == "" {
		if err := checkCardNames(c, o.Card); err != nil { // whatif_card.go
			return err
		}
	}
	var answers []WhatIf
	allFit := true
	w := o.streams.Out
	text := o.Output != "json" && o.Output != "yaml"
	if notice := query.NoDevicesNotice(c); notice != "" && text {
		fmt.Fprintln(w, notice)
	}
	for i, p := range o.pods {
		if o.File == "" {
			pod, err := o.podFromFlags(cfg.Kinds())
			if err != nil {
				return err
			}
			pod.Annotations = p.pod.Annotations // --annotation, --card, --queue
			p.pod = pod
		}
		a := query.WhatIf(c, cfg, p.pod, query.WhatIfOptions{Now: o.now(), DetailNodes: o.Nodes,
			KubeChecks: func(pod *corev1.Pod) []kubefit.NodeResult { return kubeChecks(s, pod, cfg) }})
		pod, v := a.Pod, a.Verdict
		out := WhatIf{APIVersion: APIVersion, Kind: "WhatIf", Admission: a.Changes, Refusal: a.Refusal, Verdict: v, Wanted: p.count,
			Capacity: a.Capacity, Kubernetes: a.Kube, Preemption: preemption(s, c, pod, v, o.now())}
		if !a.AllFit(p.count) {
			allFit = false
		}
		answers = append(answers, out)
		if !text {
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "What if %s/%s were created now?\n", pod.Namespace, pod.Name)
		if out.Refusal != nil {
			fmt.Fprintf(w, "  HAMi's webhook would refuse to create it: %s. The rest is what would happen if it were admitted.\n", out.Refusal)
		}
		for _, ch := range a.Changes {
			fmt.Fprintf(w, "  HAMi's webhook would set: %s\n", ch)
		}
		if err := render.Verdict(w, render.VerdictInput{Verdict: v, Kube: out.Kubernetes, KubeQuotaUsed: kubeQuotaUsed(s, pod.Namespace),
			Now: o.now(), Wide: o.Output == "wide", Nodes: o.Nodes}); err != nil {
			return err
		}
		printPreemption(w, out.Preemption)
		if v.NoGPURequest || v.NotHAMi {
			continue
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, copiesLine(out.Capacity, p.count))
	}
	if !text {
		var obj any = answers[0]
		if len(answers) > 1 {
			obj = map[string]any{"apiVersion": "v1", "kind": "List", "items": answers}
		}
		if err := printObject(w, o.Output, obj); err != nil {
			return err
		}
	}
	if o.ExitCode && !allFit {
		return errWouldNotFit
	}
	return nil
}

// copiesLine says how many copies fit now and where, and whether all that are wanted fit.
// A second line names the quota that stops the next copy when the GPUs would take it.
func copiesLine(cp engine.Capacity, wanted int) string {
	line := render.Copies(cp)
	switch {
	case cp.Copies < wanted:
		line += fmt.Sprintf("; %d wanted: %d would wait.", wanted, wanted-cp.Copies)
	case wanted == 1:
		line += "; the 1 wanted fits."
	default:
		line += fmt.Sprintf("; all %d wanted fit.", wanted)
	}
	if limit := render.CopiesLimit(cp); limit != "" {
		line += "\n" + limit
	}
	return line
}

// errNotWorkload marks a manifest document that is not a Pod or a workload with a pod template.
var errNotWorkload = errors.New("not a Pod, Deployment, StatefulSet, Job or ReplicaSet")

// podFromManifest reads one document: a Pod or a workload whose pod template is used, with its replica count.
func podFromManifest(data []byte, path string) (*corev1.Pod, int, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	fromTemplate := func(meta metav1.ObjectMeta, t corev1.PodTemplateSpec, replicas *int32) (*corev1.Pod, int, error) {
		p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: t.ObjectMeta, Spec: t.Spec}
		p.Namespace = meta.Namespace
		if p.Name == "" {
			p.Name = meta.Name + "-what-if"
		}
		n := 1
		if replicas != nil {
			n = int(*replicas)
		}
		return p, n, nil
	}
	decode := func(into any) error {
		if err := json.Unmarshal(js, into); err != nil {
			return fmt.Errorf("%s: %s: %w", path, tm.Kind, err)
		}
		return nil
	}
	switch tm.Kind {
	case "Pod":
		p := &corev1.Pod{}
		if err := decode(p); err != nil {
			return nil, 0, err
		}
		return p, 1, nil
	case "Deployment":
		d := &appsv1.Deployment{}
		if err := decode(d); err != nil {
			return nil, 0, err
		}
		return fromTemplate(d.ObjectMeta, d.Spec.Template, d.Spec.Replicas)
	case "StatefulSet":
		d := &appsv1.StatefulSet{}
		if err := decode(d); err != nil {
			return nil, 0, err
		}
		return fromTemplate(d.ObjectMeta, d.Spec.Template, d.Spec.Replicas)
	case "ReplicaSet":
		d := &appsv1.ReplicaSet{}
		if err := decode(d); err != nil {
			return nil, 0, err
		}
		return fromTemplate(d.ObjectMeta, d.Spec.Template, d.Spec.Replicas)
	case "Job":
		d := &batchv1.Job{}
		if err := decode(d); err != nil {
			return nil, 0, err
		}
		return fromTemplate(d.ObjectMeta, d.Spec.Template, d.Spec.Parallelism)
	}
	return nil, 0, fmt.Errorf("%s: kind %q is %w", path, tm.Kind, errNotWorkload)
}
