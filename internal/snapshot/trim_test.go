package snapshot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/lint"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestTrimmedPodsReadTheSame holds the reader's trimming (trim.go) to what the commands read: generated worlds
// (kube constraints, priorities and budgets) whose every pod also carries what a real pod has and no command
// should read (environment, volumes, probes, container statuses, an ephemeral container asking for a GPU ...)
// are read from a file twice, trimmed and whole (as a live read keeps them), and everything the engine,
// kube-scheduler's checks, preemption, lint and why-pending's text make of them must be the same.
func TestTrimmedPodsReadTheSame(t *testing.T) {
	first, n := worldgen.Seeds(80) // 80: the first seeds where start times (66) and labels (41) decide a preemption
	now := worldgen.Epoch.Add(time.Hour)
	pending, preempting, dropped := 0, 0, 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{MaxNodes: 6, MaxPods: 30, Kube: seed%2 == 0})
		worldgen.WithPriorities(w, seed)
		for i, p := range w.Pods.Slice() {
			addUnreadFields(p, seed+uint64(i))
		}
		var buf bytes.Buffer
		if err := w.WriteList(&buf, []string{"json", "yaml"}[seed%2]); err != nil {
			t.Fatal(err)
		}
		trimmed, err := snapshot.Parse(buf.Bytes(), "world")
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		whole, err := snapshot.ParseWhole(buf.Bytes(), "world")
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i := range whole.Pods.Slice() {
			if len(whole.Pods.At(i).Spec.Volumes) > 0 && len(trimmed.Pods.At(i).Spec.Volumes) == 0 {
				dropped++
			}
		}
		got, want := consumersSee(t, trimmed, now), consumersSee(t, whole, now)
		if got.text != want.text {
			t.Fatalf("seed %d: trimmed pods read differently; rerun with WORLD_SEED=%d WORLDS=1\n%s", seed, seed, firstDiff(got.text, want.text))
		}
		pending, preempting = pending+got.pending, preempting+got.preempting
	}
	if pending == 0 || dropped == 0 {
		t.Fatalf("%d pending pods explained, %d pods trimmed: the test compares nothing", pending, dropped)
	}
	t.Logf("%d worlds from seed %d: %d pending pods explained (%d by a preemption), %d pods trimmed", n, first, pending, preempting, dropped)
}

type seen struct {
	text                string
	pending, preempting int
}

// consumersSee writes down what each reader of a snapshot's pods makes of it.
func consumersSee(t *testing.T, s *snapshot.Snapshot, now time.Time) seen {
	t.Helper()
	var b strings.Builder
	js := func(what string, v any) {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", what, out)
	}
	cfg, err := s.Config("")
	if err != nil {
		t.Fatal(err)
	}
	c, problems := s.Cluster(cfg)
	js("problems", problems)
	byNode := s.PodsOn
	ix := preempt.NewIndexByNode(s.PodsBoundTo, s.Pods.Reader(), s.Pods.At, s.PriorityClasses, s.PDBs) // as the read commands build it
	js("index problems", ix.Problems)
	var out seen
	for _, p := range s.Pods.Slice() {
		key := p.Namespace + "/" + p.Name
		js(key+" allocation", c.Pod(p.Namespace, p.Name))
		js(key+" priority", ix.Priority(p))
		if p.Spec.NodeName != "" {
			continue
		}
		out.pending++
		a := query.Explain(c, query.ExplainInput{Pod: p, Pods: s.Pods.Scan(), Events: s.EventsFor(p.Namespace, p.Name), EventsRead: true,
			Leases: s.Leases, LeasesRead: s.LeasesRead, Quotas: s.Quotas, Now: now, DetailAll: true,
			KubeChecks: func(p *corev1.Pod) []kubefit.NodeResult { return query.KubeChecks(p, s.Nodes, byNode, cfg) }})
		js(key+" verdict", a.Verdict)
		js(key+" kube", a.Kube)
		js(key+" unbound", a.Unbound)
		js(key+" waiting", a.Waiting)
		if err := render.WhyPending(&b, &a, true, nil); err != nil {
			t.Fatal(err)
		}
		if a.Verdict != nil {
			o := preempt.Options{Eval: engine.EvalOptions{Now: now}}
			fmt.Fprintf(&b, "%s preemption: %q\n", key, preempt.Explain(c, ix, p, a.Verdict, o).Lines())
			if !a.Verdict.Fits {
				// As it is, and as the most important pod of the cluster, so that victims are chosen (by
				// priority, budgets and start time) wherever evicting makes room.
				top := p.DeepCopy()
				highest := int32(1 << 30)
				top.Spec.Priority, top.Spec.PriorityClassName = &highest, ""
				for _, q := range []*corev1.Pod{p, top} {
					r := preempt.Search(c, ix, q, o)
					js(key+" search", r)
					if r.Chosen != nil {
						out.preempting++
					}
				}
			}
		}
	}
	fs := lint.Run(s, c, cfg)
	lint.Sort(fs)
	js("lint", fs)
	out.text = b.String()
	return out
}

// addUnreadFields gives a pod what a real one carries and no command reads, varied by n; an ephemeral container
// asks for a GPU, CPU and memory (kube-scheduler counts no ephemeral container's requests).
func addUnreadFields(p *corev1.Pod, n uint64) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: int32(5 + n%10)}
	grace, deadline, yes := int64(30+n%7), int64(3600), true
	unread := func(c *corev1.Container) {
		c.Command, c.Args, c.WorkingDir = []string{"python", "-m", "train"}, []string{fmt.Sprintf("--epochs=%d", n%90)}, "/work"
		c.Env = []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"}, {Name: "CUDA_DEVICE_MEMORY_LIMIT", Value: fmt.Sprintf("%dm", 1000+n%5000)},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "train"}}}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "raw", DevicePath: "/dev/xvda"}}
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = probe, probe, probe
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
		c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "/dev/termination-log", corev1.TerminationMessageReadFile, corev1.PullIfNotPresent
		c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}
		c.Stdin, c.TTY = n%2 == 0, n%3 == 0
	}
	for i := range p.Spec.InitContainers {
		unread(&p.Spec.InitContainers[i])
	}
	for i := range p.Spec.Containers {
		unread(&p.Spec.Containers[i])
	}
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse("4000"),
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("512Gi")}
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug",
		Image: "busybox", Resources: corev1.ResourceRequirements{Limits: gpu, Requests: gpu}}}}
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
	p.Spec.DNSPolicy, p.Spec.DNSConfig = corev1.DNSClusterFirst, &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10"}}
	p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"data"}}}
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
	p.Spec.TerminationGracePeriodSeconds, p.Spec.ActiveDeadlineSeconds = &grace, &deadline
	p.Spec.AutomountServiceAccountToken, p.Spec.EnableServiceLinks, p.Spec.SetHostnameAsFQDN, p.Spec.ShareProcessNamespace = &yes, &yes, &yes, &yes
	p.Spec.DeprecatedServiceAccount, p.Spec.Hostname, p.Spec.Subdomain = "default", fmt.Sprintf("h%d", n), "workers"
	st := &p.Status
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: fmt.Sprintf("sha256:%064x", n),
			State: running, Ready: true, RestartCount: int32(n % 4), AllocatedResources: gpu, Resources: &corev1.ResourceRequirements{Requests: gpu}})
	}
	st.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: running}}
	st.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", State: running}}
	st.HostIP, st.HostIPs = "192.168.0.7", []corev1.HostIP{{IP: "192.168.0.7"}}
	st.PodIPs = []corev1.PodIP{{IP: fmt.Sprintf("10.0.%d.%d", n%250, n/250%250)}}
	st.QOSClass = corev1.PodQOSBurstable
	st.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu"}}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n trimmed: %s\n whole:   %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("trimmed has %d lines, whole %d", len(g), len(w))
}
