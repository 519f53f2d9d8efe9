package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
)

// maxCopies bounds how many copies what-if places to count "how many fit now".
const maxCopies = 10000

// WhatIfOptions are the inputs of `kubectl hami what-if`.
type WhatIfOptions struct {
	read    *readFlags
	streams genericiooptions.IOStreams
	now     func() time.Time

	Output      string
	File        string
	Name        string
	GPUs        int64
	GPUMem      int64
	GPUMemPct   int64
	GPUCores    int64
	Annotations []string
	Card        string
	Queue       string
	Count       int
	Nodes       []string

	namespace string
	pod       *corev1.Pod
}

func newWhatIfCommand(read *readFlags, streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	o := &WhatIfOptions{read: read, streams: streams, now: now}
	cmd := &cobra.Command{
		Use:   "what-if",
		Short: "Check where a GPU pod that does not exist yet would land, and how many copies fit now",
		Example: `  kubectl hami what-if --gpus 2 --gpumem 20000 --gpucores 30 -n ml-research
  kubectl hami what-if -f deployment.yaml
  kubectl hami what-if --gpus 1 --gpumem-percentage 50 --annotation nvidia.com/use-gputype=A100 --count 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	read.addFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "output format: wide, json or yaml")
	f.StringVarP(&o.File, "filename", "f", "", "a Pod, Deployment, StatefulSet, Job or ReplicaSet manifest (its template and replicas are used)")
	f.StringVar(&o.Name, "name", "what-if", "name of the hypothetical pod")
	f.Int64Var(&o.GPUs, "gpus", 1, "GPUs per pod (nvidia.com/gpu)")
	f.Int64Var(&o.GPUMem, "gpumem", 0, "GPU memory per GPU in MiB (nvidia.com/gpumem)")
	f.Int64Var(&o.GPUMemPct, "gpumem-percentage", 0, "GPU memory per GPU in percent (nvidia.com/gpumem-percentage)")
	f.Int64Var(&o.GPUCores, "gpucores", -1, "GPU cores per GPU in percent (nvidia.com/gpucores)")
	f.StringArrayVar(&o.Annotations, "annotation", nil, "pod annotation key=value (repeatable), e.g. nvidia.com/use-gputype=A100")
	f.StringVar(&o.Card, "card", "", "Volcano card model(s) the pod may use, preferred first: \"NVIDIA-H200\" or \"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D\" (volcano.sh/card.name)")
	f.StringVar(&o.Queue, "queue", "", "Volcano queue whose card quota the pod draws on (scheduling.volcano.sh/queue-name)")
	f.IntVar(&o.Count, "count", 0, "copies wanted (default: the manifest's replicas, else 1)")
	f.StringSliceVar(&o.Nodes, "node", nil, "show every gate for every GPU of these nodes")
	return cmd
}

// Complete builds the hypothetical pod from the flags or the manifest.
func (o *WhatIfOptions) Complete(cmd *cobra.Command) error {
	o.namespace = o.read.namespace()
	if o.File != "" {
		pod, replicas, err := podFromManifest(o.File)
		if err != nil {
			return err
		}
		if cmd.Flags().Changed("namespace") || pod.Namespace == "" {
			pod.Namespace = o.namespace
		}
		o.namespace = pod.Namespace
		if o.Count == 0 {
			o.Count = replicas
		}
		o.pod = pod
	} else {
		o.pod = o.podFromFlags()
	}
	if o.Count == 0 {
		o.Count = 1
	}
	for _, a := range o.Annotations {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return fmt.Errorf("--annotation %q: want key=value", a)
		}
		if o.pod.Annotations == nil {
			o.pod.Annotations = map[string]string{}
		}
		o.pod.Annotations[k] = v
	}
	for k, v := range map[string]string{codec.CardNameAnnotation: o.Card, codec.QueueNameAnnotation: o.Queue} {
		if v == "" {
			continue
		}
		if o.pod.Annotations == nil {
			o.pod.Annotations = map[string]string{}
		}
		o.pod.Annotations[k] = v
	}
	return nil
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
	}
	return nil
}

func (o *WhatIfOptions) podFromFlags() *corev1.Pod {
	l := corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(o.GPUs, resource.DecimalSI)}
	if o.GPUMem > 0 {
		l["nvidia.com/gpumem"] = *resource.NewQuantity(o.GPUMem, resource.DecimalSI)
	}
	if o.GPUMemPct > 0 {
		l["nvidia.com/gpumem-percentage"] = *resource.NewQuantity(o.GPUMemPct, resource.DecimalSI)
	}
	if o.GPUCores >= 0 {
		l["nvidia.com/gpucores"] = *resource.NewQuantity(o.GPUCores, resource.DecimalSI)
	}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: o.namespace, Name: o.Name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: l}}}}}
}

// renameResources maps the default resource names onto the cluster's configured ones.
func renameResources(pod *corev1.Pod, cfg engine.Config) {
	def := engine.DefaultConfig()
	m := map[string]string{def.ResourceCountName: cfg.ResourceCountName, def.ResourceMemoryName: cfg.ResourceMemoryName,
		def.ResourceMemoryPercentageName: cfg.ResourceMemoryPercentageName, def.ResourceCoreName: cfg.ResourceCoreName}
	for i := range pod.Spec.Containers {
		l := pod.Spec.Containers[i].Resources.Limits
		for from, to := range m {
			if q, ok := l[corev1.ResourceName(from)]; ok && from != to {
				delete(l, corev1.ResourceName(from))
				l[corev1.ResourceName(to)] = q
			}
		}
	}
}

// WhatIf is the -o json|yaml form of the answer.
type WhatIf struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Admission  []string `json:"admission,omitempty"`
	// Refusal is set when HAMi's admission webhook would not even create the pod.
	Refusal    *engine.WebhookRefusal `json:"webhookRefusal,omitempty"`
	Verdict    *engine.Verdict        `json:"verdict"`
	Wanted     int                    `json:"wanted"`
	Capacity   engine.Capacity        `json:"capacity"`
	Kubernetes []kubefit.NodeResult   `json:"kubernetes,omitempty"`
}

// Run evaluates the hypothetical pod against the cluster.
func (o *WhatIfOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	c, cfg := o.read.cluster(s, o.streams.ErrOut)
	if o.File == "" {
		if err := checkCardNames(c, o.Card); err != nil { // whatif_card.go
			return err
		}
		renameResources(o.pod, cfg)
	}
	pod, changes := engine.Admit(o.pod, cfg)
	v := c.Evaluate(pod, engine.EvalOptions{Now: o.now(), DetailNodes: o.Nodes})
	out := WhatIf{APIVersion: APIVersion, Kind: "WhatIf", Admission: changes, Refusal: c.WebhookRefusal(pod), Verdict: v, Wanted: o.Count,
		Capacity: c.Capacity(pod, maxCopies), Kubernetes: kubeChecks(s, pod, cfg)}
	if o.Output == "json" || o.Output == "yaml" {
		return printObject(o.streams.Out, o.Output, out)
	}
	w := o.streams.Out
	fmt.Fprintf(w, "What if %s/%s were created now?\n", pod.Namespace, pod.Name)
	if out.Refusal != nil {
		fmt.Fprintf(w, "  HAMi's webhook would refuse to create it: %s. The rest is what would happen if it were admitted.\n", out.Refusal)
	}
	for _, ch := range changes {
		fmt.Fprintf(w, "  HAMi's webhook would set: %s\n", ch)
	}
	if err := render.Verdict(w, render.VerdictInput{Verdict: v, Kube: out.Kubernetes, KubeQuotaUsed: kubeQuotaUsed(s, pod.Namespace),
		Now: o.now(), Wide: o.Output == "wide", Nodes: o.Nodes}); err != nil {
		return err
	}
	if v.NoGPURequest {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, copiesLine(out.Capacity, o.Count))
	return nil
}

// copiesLine says how many copies fit now and where, and whether all that are wanted fit.
func copiesLine(cp engine.Capacity, wanted int) string {
	line := render.Copies(cp)
	if cp.Copies >= wanted {
		if wanted == 1 {
			return line + "; the 1 wanted fits."
		}
		return line + fmt.Sprintf("; all %d wanted fit.", wanted)
	}
	return line + fmt.Sprintf("; %d wanted: %d would wait.", wanted, wanted-cp.Copies)
}

// podFromManifest reads a Pod or a workload whose pod template is used, with its replica count.
func podFromManifest(path string) (*corev1.Pod, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
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
	return nil, 0, fmt.Errorf("%s: kind %q is not a Pod, Deployment, StatefulSet, Job or ReplicaSet", path, tm.Kind)
}
