package snapshot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestHandDecoderMatchesReflection holds the hand decoder (decode_pod.go) to the reflection decoder and
// trimPod before it: every item of genbig's cluster, of pods shaped as the API server writes them (genbig
// -rich's, and with every field trimPod drops), of generated worlds with kube constraints, of the demo, and a
// pod with every field the decoder keeps, decodes to the same object both ways, and the hand decoder reads
// every pod and node of them (none falls back); each pod is also what the snapshot's compact record of it
// (pods.go) builds.
func TestHandDecoderMatchesReflection(t *testing.T) {
	sets := map[string][]byte{}
	write := func(name string, s *snapshot.Snapshot, format string) {
		var buf bytes.Buffer
		if err := s.WriteList(&buf, format); err != nil {
			t.Fatal(err)
		}
		sets[name] = buf.Bytes()
	}
	write("genbig", genbigShape(20, 200), "json")
	rich := genbigShape(10, 100)
	for i, p := range rich.Pods.Slice() {
		richPod(p, i)
	}
	write("rich", rich, "json")
	first, n := worldgen.Seeds(12)
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{MaxNodes: 6, MaxPods: 30, Kube: seed%2 == 0})
		worldgen.WithPriorities(w, seed)
		for i, p := range w.Pods.Slice() {
			addUnreadFields(p, seed+uint64(i))
		}
		var buf bytes.Buffer
		if err := w.WriteList(&buf, "yaml"); err != nil { // YAML: the items go through their JSON conversion
			t.Fatal(err)
		}
		sets[fmt.Sprintf("world %d", seed)] = buf.Bytes()
	}
	demo, err := os.ReadFile("../../examples/demo-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets["demo"] = demo
	write("every kept field", &snapshot.Snapshot{Pods: snapshot.PodsOf(everyKeptField())}, "json")

	pods, others := 0, 0
	for name, data := range sets {
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []json.RawMessage }
		if err := json.Unmarshal(js, &list); err != nil {
			t.Fatal(err)
		}
		for i, item := range list.Items {
			got, hand, err := snapshot.DecodeItem(item)
			want, wantErr := snapshot.DecodeItemByReflection(item)
			if err != nil || wantErr != nil {
				t.Fatalf("%s: items[%d]: %v, by reflection %v", name, i, err, wantErr)
			}
			_, isPod := want.(*corev1.Pod)
			_, isNode := want.(*corev1.Node)
			if hand != (isPod || isNode) {
				t.Fatalf("%s: items[%d]: read by hand %v:\n%s", name, i, hand, item)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("%s: items[%d] decodes differently:\n hand:       %s\n reflection: %s", name, i, g, w)
			}
			if isPod {
				pods++
				// The snapshot keeps the pod as a compact record: the pod built from it is the pod read.
				if rt := snapshot.RecordRoundTrip(want.(*corev1.Pod)); !reflect.DeepEqual(rt, want) {
					g, _ := json.Marshal(rt)
					w, _ := json.Marshal(want)
					t.Fatalf("%s: items[%d] differs built from its record:\n record: %s\n read:   %s", name, i, g, w)
				}
				// The record the decoder makes itself, with a goroutine's cache, builds the same pod.
				first, again, ok := snapshot.DecodeItemRecord(item)
				if !ok {
					t.Fatalf("%s: items[%d]: the hand decoder makes no record of it:\n%s", name, i, item)
				}
				for _, rt := range []*corev1.Pod{first, again} {
					if !reflect.DeepEqual(rt, want) {
						g, _ := json.Marshal(rt)
						w, _ := json.Marshal(want)
						t.Fatalf("%s: items[%d] differs built from the decoder's record:\n record: %s\n read:   %s", name, i, g, w)
					}
				}
			} else {
				others++
			}
		}
	}
	if pods < 300 || others < 30 {
		t.Fatalf("%d pods and %d other objects compared: the test compares too little", pods, others)
	}
	t.Logf("%d pods and %d other objects decode the same", pods, others)
}

// everyKeptField is a pod with every field the hand decoder reads set, the rare ones json-iterator reads
// included.
func everyKeptField() *corev1.Pod {
	yes, no := true, false
	grace, prio, gen := int64(30), int32(1000), int64(3)
	at := metav1.Date(2026, 11, 20, 8, 0, 5, 120000000, time.FixedZone("x", 3600))
	policy := corev1.PreemptNever
	runtime, override := "nvidia", "gpu-host"
	always := corev1.ContainerRestartPolicyAlways
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2"), "cpu": resource.MustParse("1500m")}
	c := corev1.Container{Name: "main", Image: "train:2", Ports: []corev1.ContainerPort{{Name: "http", HostPort: 80, ContainerPort: 8080,
		Protocol: corev1.ProtocolTCP, HostIP: "10.0.0.1"}},
		Resources:          corev1.ResourceRequirements{Limits: gpu, Requests: gpu, Claims: []corev1.ResourceClaim{{Name: "gpu", Request: "one"}}},
		RestartPolicy:      &always,
		RestartPolicyRules: []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart}},
		SecurityContext:    &corev1.SecurityContext{Privileged: &yes, Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "every", GenerateName: "ev-", Namespace: "ns \"quoted\" \u00e9", SelfLink: "/api/v1/x",
			UID: "u-1", ResourceVersion: "42", Generation: gen, CreationTimestamp: at, DeletionTimestamp: &at,
			DeletionGracePeriodSeconds: &grace, Labels: map[string]string{"app": "t", "esc\taped": "v\n"},
			Annotations: map[string]string{"hami.io/vgpu-node": "n1", "empty": ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u-2",
				Controller: &yes, BlockOwnerDeletion: &no}},
			Finalizers: []string{"example.com/keep"}},
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{c}, Containers: []corev1.Container{c, {Name: "side"}},
			RestartPolicy: corev1.RestartPolicyOnFailure, NodeSelector: map[string]string{"gpu": "a100"}, ServiceAccountName: "sa",
			NodeName: "n1", HostNetwork: true, HostPID: true, HostIPC: true,
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: &grace},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "k", Operator: "In", Values: []string{"v"}}}}}}}},
			SchedulerName: "hami-scheduler", Tolerations: []corev1.Toleration{{Key: "k", Operator: "Equal", Value: "v", Effect: "NoExecute", TolerationSeconds: &grace}},
			PriorityClassName: "high", Priority: &prio, RuntimeClassName: &runtime, PreemptionPolicy: &policy,
			Overhead:                  corev1.ResourceList{"cpu": resource.MustParse("250m")},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
			OS:                        &corev1.PodOS{Name: corev1.Linux}, HostUsers: &no,
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "wait"}}, ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu"}},
			Resources: &corev1.ResourceRequirements{Limits: gpu}, HostnameOverride: &override},
		Status: corev1.PodStatus{ObservedGeneration: 2, Phase: corev1.PodPending, Message: "m", Reason: "r", NominatedNodeName: "n2",
			PodIP: "10.1.1.1", StartTime: &at, AllocatedResources: gpu, Resources: &corev1.ResourceRequirements{Requests: gpu},
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, ObservedGeneration: 1, Status: corev1.ConditionFalse,
				LastProbeTime: at, LastTransitionTime: at, Reason: "Unschedulable", Message: "0/3 nodes"}}},
	}
}

// TestHandDecoderNamesEveryField holds the hand decoder to the Kubernetes types it reads: each field of each
// struct it reads by hand (the pod's and the node's) is either read or dropped by name. A field the decoder does not name would send
// every object that carries it to the reflection decoder; a newer k8s.io/api that adds one fails here.
func TestHandDecoderNamesEveryField(t *testing.T) {
	nulls := func(v any) string {
		var b strings.Builder
		b.WriteString("{")
		tp := reflect.TypeOf(v)
		var walk func(tp reflect.Type)
		walk = func(tp reflect.Type) {
			for i := 0; i < tp.NumField(); i++ {
				f := tp.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Anonymous && name == "" {
					walk(f.Type)
					continue
				}
				if name == "kind" && tp == reflect.TypeOf(metav1.TypeMeta{}) {
					continue // the pod's own kind is written first
				}
				if b.Len() > 1 {
					b.WriteString(",")
				}
				b.WriteString(`"` + name + `":null`)
			}
		}
		walk(tp)
		b.WriteString("}")
		return b.String()
	}
	for _, c := range []struct {
		what string
		in   string
	}{
		{"Pod", `{"kind":"Pod",` + nulls(corev1.Pod{})[1:]},
		{"ObjectMeta", `{"kind":"Pod","metadata":` + nulls(metav1.ObjectMeta{}) + `}`},
		{"OwnerReference", `{"kind":"Pod","metadata":{"ownerReferences":[` + nulls(metav1.OwnerReference{}) + `]}}`},
		{"PodSpec", `{"kind":"Pod","spec":` + nulls(corev1.PodSpec{}) + `}`},
		{"Container", `{"kind":"Pod","spec":{"containers":[` + nulls(corev1.Container{}) + `]}}`},
		{"ContainerPort", `{"kind":"Pod","spec":{"containers":[{"ports":[` + nulls(corev1.ContainerPort{}) + `]}]}}`},
		{"ResourceRequirements", `{"kind":"Pod","spec":{"containers":[{"resources":` + nulls(corev1.ResourceRequirements{}) + `}]}}`},
		{"Toleration", `{"kind":"Pod","spec":{"tolerations":[` + nulls(corev1.Toleration{}) + `]}}`},
		{"PodStatus", `{"kind":"Pod","status":` + nulls(corev1.PodStatus{}) + `}`},
		{"PodCondition", `{"kind":"Pod","status":{"conditions":[` + nulls(corev1.PodCondition{}) + `]}}`},
		{"Node", `{"kind":"Node",` + nulls(corev1.Node{})[1:]},
		{"NodeSpec", `{"kind":"Node","spec":` + nulls(corev1.NodeSpec{}) + `}`},
		{"Taint", `{"kind":"Node","spec":{"taints":[` + nulls(corev1.Taint{}) + `]}}`},
		{"NodeStatus", `{"kind":"Node","status":` + nulls(corev1.NodeStatus{}) + `}`},
		{"NodeCondition", `{"kind":"Node","status":{"conditions":[` + nulls(corev1.NodeCondition{}) + `]}}`},
	} {
		if _, hand, err := snapshot.DecodeItem([]byte(c.in)); err != nil || !hand {
			t.Errorf("%s: a field the hand decoder does not name (hand %v, err %v) in\n%s", c.what, hand, err, c.in)
		}
	}
}
