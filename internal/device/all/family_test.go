package all_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/all"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
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
	node := ft.RegNode("n1", "acme.io/node-apu-register", []codec.DeviceInfo{
		{ID: "apu-0", Index: 0, Count: 4, Devmem: 8000, Devcore: 100, Type: "ACME-1", Health: true},
		{ID: "apu-1", Index: 1, Count: 4, Devmem: 16000, Devcore: 100, Type: "ACME-1", Health: true},
		{ID: "apu-2", Index: 2, Count: 4, Devmem: 16000, Devcore: 100, Type: "ACME-1", Health: true},
	})
	ask := func(mem string) map[string]string {
		return map[string]string{"acme.io/apu": "1", "acme.io/apumem": mem}
	}
	// apu-2's memory taken by a counted pod.
	full := ft.Counted(ft.Pod("q", nil, ask("16000")), "n1", "hami.io/acme-devices-allocated", "apu-2,ACME,16000,0:;")
	// Its table test is any family's: the shared helper runs it on the registered Kinds.
	ft.Run(t, kinds, []ft.Case{
		// 9,500 MiB, rounded by the family's reader to 10,000: apu-0 is too small, apu-1 is odd, apu-2 takes it.
		{Name: "the family's reader, row and bind annotation", Node: node, Pod: ft.Pod("p", nil, ask("9500")),
			Want: [][]string{{"apu-2"}}, Annotations: map[string]string{acmeParity: "even", "hami.io/acme-devices-allocated": "apu-2,ACME,10000,0:;"}},
		// 12,000 MiB: only apu-1 and apu-2 hold it; with apu-2 taken the family's row decides, counted in HAMi's
		// reason text beside the common memory gate.
		{Name: "the family's row refuses the odd APU", Node: node, Counted: []*corev1.Pod{full}, Pod: ft.Pod("p", nil, ask("12000")),
			Reason: "1/3 CardNotFoundCustomFilterRule, 2/3 CardInsufficientMemory", Detail: "APU apu-1 has an odd index"},
	})
	if g := engine.GateOf(engine.CardNotFoundCustomFilterRule); g == nil {
		t.Fatal("the code has no row")
	}
}
