package all_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/all"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// acme is a family that exists only in this test: its package would be this file, its registration the one
// line below that appends it to all.Families. It has a register annotation, its own resources, a row of its
// own (even-indexed APUs only) and an annotation of its own at bind; no engine file knows it.
type acme struct{}

const acmeParity = "acme.io/apu-parity"

func (acme) Name() string    { return "acme" }
func (acme) Section() string { return "acme" }

func (acme) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName string `json:"resourceCountName"`
	}
	if err := device.Decode("acme", section, &s); err != nil {
		return nil, err
	}
	return []device.Kind{{
		Vendor: "acme", Name: "ACME", Word: "APU",
		Register:   "acme.io/node-apu-register",
		ToAllocate: "hami.io/acme-devices-to-allocate", Allocated: "hami.io/acme-devices-allocated",
		Count:  device.Or(s.ResourceCountName, "acme.io/apu"),
		Memory: "acme.io/apumem",
		Rows:   []device.Row{evenRow},
		// Its request reader is the common one with a rounding of its own, chosen here: no engine file
		// reads it either.
		ReadRequest: device.Share{Round: roundToThousand}.Read,
		BindExtra: func(_ *device.Kind, containers [][]device.Placed, _ map[string]string, _ int64) map[string]string {
			return map[string]string{acmeParity: "even"}
		},
		ExtraKeys: []string{acmeParity},
	}}, nil
}

// roundToThousand is ACME's webhook: memory is handed out in slices of 1,000 MiB.
func roundToThousand(_ *device.Kind, _ *device.Reading, mib int64) (int64, string) {
	return (mib + 999) / 1000 * 1000, ""
}

// evenRow is the family's own gate: an odd-indexed APU is refused.
var evenRow = device.Row{
	Number: "13d", Name: "acme-even", Code: "CardNotFoundCustomFilterRule",
	Meaning: "ACME: only even-indexed APUs take pods", Numbers: "the APU's index", Hint: "use an even APU",
	Check: func(d *device.Dev) device.Outcome {
		if d.Index%2 == 1 {
			return device.Outcome{Fail: true, Need: 0, Have: int64(d.Index), Detail: "APU " + d.UUID + " has an odd index"}
		}
		return device.Outcome{}
	},
}

func TestTestOnlyFamilyPlacesThroughTheEngine(t *testing.T) {
	saved := all.Families
	all.Families = append(append([]device.Family(nil), all.Families...), acme{}) // the one registration line
	defer func() { all.Families = saved }()

	kinds, err := all.Kinds(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	cfg.Vendors = kinds
	c := engine.NewCluster(cfg)

	reg := codec.FormatNodeRegister([]codec.DeviceInfo{
		{ID: "apu-0", Index: 0, Count: 4, Devmem: 8000, Devcore: 100, Type: "ACME-1", Health: true},
		{ID: "apu-1", Index: 1, Count: 4, Devmem: 16000, Devcore: 100, Type: "ACME-1", Health: true},
		{ID: "apu-2", Index: 2, Count: 4, Devmem: 16000, Devcore: 100, Type: "ACME-1", Health: true},
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{"acme.io/node-apu-register": reg}}}
	if probs := c.SetNode(node); len(probs) != 0 {
		t.Fatalf("node problems: %v", probs)
	}

	pod := func(mem string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"acme.io/apu": resource.MustParse("1"), "acme.io/apumem": resource.MustParse(mem)}}}}}}
	}

	// 9,500 MiB, rounded by the family's reader to 10,000: apu-0 is too small, apu-1 is odd, apu-2 takes it.
	v := c.Evaluate(pod("9500"), engine.EvalOptions{})
	if !v.Fits || v.Placement == nil {
		t.Fatalf("does not fit: %s %v", v.Summary, v.Problems)
	}
	devs := v.Placement.Containers[0].Devices
	if len(devs) != 1 || devs[0].UUID != "apu-2" || devs[0].MemMiB != 10000 || devs[0].Device != "ACME" {
		t.Fatalf("placed on %+v, want apu-2 with 10000 MiB", devs)
	}
	annos := v.Placement.Annotations(time.Unix(1, 0))
	if annos[acmeParity] != "even" || !strings.Contains(annos["hami.io/acme-devices-allocated"], "apu-2,ACME,10000,") {
		t.Fatalf("bind annotations %v", annos)
	}
	// 12,000 MiB: only apu-1 and apu-2 hold it; with apu-2's memory taken by a counted pod the family's row
	// decides.
	placed := pod("16000")
	placed.Name = "q"
	placed.Annotations = map[string]string{"hami.io/acme-devices-allocated": "apu-2,ACME,16000,0:;",
		codec.PodNodeAnnotation: "n1", codec.PodBindPhaseAnnotation: codec.BindPhaseSuccess}
	placed.Spec.NodeName = "n1"
	if probs := c.SetPod(placed); len(probs) != 0 {
		t.Fatalf("pod problems: %v", probs)
	}
	v = c.Evaluate(pod("12000"), engine.EvalOptions{})
	// HAMi's reason text counts the family's row beside the common memory gate.
	if v.Fits || len(v.Nodes) != 1 || v.Nodes[0].Reason != "1/3 CardNotFoundCustomFilterRule, 2/3 CardInsufficientMemory" {
		t.Fatalf("fits=%v nodes %+v, want the family's row to refuse apu-1", v.Fits, v.Nodes)
	}
	if g := engine.GateOf(engine.CardNotFoundCustomFilterRule); g == nil {
		t.Fatal("the code has no row")
	}
}
