package device_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// shared is a Kind with every resource, as the blocks below read it.
var shared = device.Kind{Vendor: "acme", Name: "ACME", Word: "APU", Count: "acme/apu", Memory: "acme/mem",
	MemoryPercent: "acme/pct", Cores: "acme/cores", MemoryFactor: 2, DefaultCores: 7}

func reading(kv ...string) (*device.Reading, *[]string) {
	c := &corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Resources.Limits[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	var probs []string
	return &device.Reading{C: c, Path: "spec.containers", Bad: device.ReportFunc(func(field, format string, args ...any) {
		probs = append(probs, field+": "+fmt.Sprintf(format, args...))
	})}, &probs
}

// TestRequestBlocks: each building block a family composes its request reader from, on the container it
// is written for.
func TestRequestBlocks(t *testing.T) {
	neuron := shared
	neuron.Memory, neuron.MemoryPercent = "", ""
	neuron.Mutate = func(r *device.Request) string {
		if r.Count == 0 {
			if r.Cores%2 != 0 {
				return "odd cores"
			}
			r.Count, r.Whole = r.Cores/2, true
		}
		return ""
	}
	tests := []struct {
		name   string
		read   device.RequestReader
		kind   device.Kind
		limits []string
		want   device.Ask
		ok     bool
		probs  string
	}{
		{"share: memory times the factor, cores as written", device.ShareRequest, shared, []string{"acme/apu", "2", "acme/mem", "100", "acme/cores", "30"},
			device.Ask{Count: 2, MemoryMiB: 200, Cores: 30}, true, ""},
		{"share: percentage, default cores", device.ShareRequest, shared, []string{"acme/apu", "1", "acme/pct", "140"},
			device.Ask{Count: 1, MemoryPercent: 100, Cores: 7}, true, ""},
		{"share: nothing named is 100 %", device.ShareRequest, shared, []string{"acme/apu", "1"},
			device.Ask{Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 7}, true, ""},
		{"share: cores above 100 reported, kept for the webhook", device.ShareRequest, shared, []string{"acme/apu", "1", "acme/cores", "150"},
			device.Ask{Count: 1, MemoryPercent: 100, MemoryDefaulted: true, Cores: 100, WebhookCores: 150}, true, "acme/cores]: 150% is above 100%"},
		{"count: negative is reported, asks nothing", device.ShareRequest, shared, []string{"acme/apu", "-1"},
			device.Ask{}, false, "negative APU count -1 is ignored"},
		{"count: clamped", device.SlotRequest, shared, []string{"acme/apu", "100000"},
			device.Ask{Count: device.MaxCount}, true, "100000 APUs is more than any node has"},
		{"whole: every device whole", device.WholeRequest, shared, []string{"acme/apu", "3", "acme/mem", "5"},
			device.Ask{Count: 3, MemoryPercent: 100, Cores: 100}, true, ""},
		{"slots: no memory, no cores", device.SlotRequest, shared, []string{"acme/apu", "2", "acme/mem", "5"},
			device.Ask{Count: 2}, true, ""},
		{"split evenly over the devices", device.Share{PerDevice: device.SplitEvenly}.Read, shared, []string{"acme/apu", "2", "acme/mem", "100", "acme/cores", "60"},
			device.Ask{Count: 2, MemoryMiB: 100, Cores: 30}, true, ""},
		{"many devices take whole cores", device.Share{Cores: device.ManyTakeWholeCores}.Read, shared, []string{"acme/apu", "2", "acme/cores", "30"},
			device.Ask{Count: 2, MemoryPercent: 100, MemoryDefaulted: true, Cores: 100, WebhookCores: 200}, true, ""},
		{"a bare memory is times the factor", device.Share{MiB: device.BareTimesFactor}.Read, shared, []string{"acme/apu", "1", "acme/mem", "8"},
			device.Ask{Count: 1, MemoryMiB: 16, Cores: 7}, true, ""},
		{"a memory with a unit is bytes", device.Share{MiB: device.BareTimesFactor}.Read, shared, []string{"acme/apu", "1", "acme/mem", "8Gi"},
			device.Ask{Count: 1, MemoryMiB: 8192, Cores: 7}, true, ""},
		{"count from cores alone", device.Share{Count: device.CountOrCores}.Read, neuron, []string{"acme/cores", "4"},
			device.Ask{Count: 2, Cores: 100, CoresOfDevice: true, ByCores: true}, true, ""},
		{"cores the webhook refuses", device.Share{Count: device.CountOrCores}.Read, neuron, []string{"acme/cores", "3"},
			device.Ask{}, false, "odd cores: HAMi's webhook refuses the pod"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, probs := reading(tc.limits...)
			k := tc.kind
			got, ok := tc.read(&k, r)
			if ok != tc.ok || (ok && !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
			all := strings.Join(*probs, "\n")
			if tc.probs == "" && all != "" || !strings.Contains(all, tc.probs) {
				t.Errorf("problems %q, want %q", all, tc.probs)
			}
		})
	}
}

func TestAskers(t *testing.T) {
	r, _ := reading("acme/cores", "2")
	if device.NamesCount(&shared, r) || !device.NamesCountOrCores(&shared, r) {
		t.Error("a container naming only cores asks for the Kind only with NamesCountOrCores")
	}
}

func TestRegisterBlocks(t *testing.T) {
	k := device.Kind{Name: "ACME", Word: "APU", Register: "acme/register", Count: "acme/apu", Cores: "acme/cores"}
	reg := codec.FormatNodeRegister([]codec.DeviceInfo{{ID: "a-0", Count: 1, Devmem: 10, Devcore: 100, Type: "A", Health: true, Mode: "mig"}})
	node := func(annos map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: annos}}
	}
	var probs []string
	bad := device.ReportFunc(func(field, format string, args ...any) {
		probs = append(probs, field+": "+fmt.Sprintf(format, args...))
	})

	if r, ok := device.RegisterList(&k, node(map[string]string{"acme/register": reg}), bad); !ok || len(r.Devices) != 1 || r.Field != "metadata.annotations[acme/register]" || r.Format != "" {
		t.Errorf("RegisterList = %+v %v", r, ok)
	} else if r.Devices[0].Mode != "" {
		t.Errorf("RegisterList keeps mode %q: only NVIDIA's reader keeps a device's mode", r.Devices[0].Mode)
	}
	if _, ok := device.RegisterList(&k, node(nil), bad); ok || len(probs) != 0 {
		t.Errorf("no annotation: ok %v, problems %v", ok, probs)
	}
	if _, ok := device.RegisterList(&k, node(map[string]string{"acme/register": "[{"}), bad); ok || len(probs) != 1 || !strings.Contains(probs[0], "its APUs are not counted") {
		t.Errorf("unreadable annotation: ok %v, problems %v", ok, probs)
	}
	probs = nil
	parsed := device.RegisterParsed(func(key, value string) ([]codec.DeviceInfo, error) {
		return []codec.DeviceInfo{{ID: key + "=" + value}}, nil
	})
	if r, ok := parsed(&k, node(map[string]string{"acme/register": "x"}), bad); !ok || r.Devices[0].ID != "acme/register=x" {
		t.Errorf("RegisterParsed = %+v %v", r, ok)
	}
	fromNode := device.FromNode(func(n *corev1.Node) []codec.DeviceInfo {
		if n.Name == "n" {
			return []codec.DeviceInfo{{ID: "n-0"}}
		}
		return nil
	})
	if r, ok := fromNode(&k, node(nil), bad); !ok || len(r.Devices) != 1 || r.Field != "status.capacity[acme/cores]" {
		t.Errorf("FromNode = %+v %v", r, ok)
	}
	serving := device.WhileServing(func(*corev1.Node) (string, string) { return "status.capacity[acme/apu]", "is 0" }, device.RegisterList)
	if _, ok := serving(&k, node(nil), bad); ok || len(probs) != 0 {
		t.Errorf("not serving, no annotation: ok %v, problems %v (the check runs only for a node that registers)", ok, probs)
	}
	if _, ok := serving(&k, node(map[string]string{"acme/register": reg}), bad); ok || len(probs) != 1 || probs[0] != "status.capacity[acme/apu]: is 0" {
		t.Errorf("not serving: ok %v, problems %v", ok, probs)
	}
}

func TestReadCoreMasks(t *testing.T) {
	entries, err := device.ReadCoreMasks("k", "d-0,AWSNeuron,0,6:;")
	if err != nil {
		t.Fatal(err)
	}
	if d := entries[0][0]; d.CoreMask != 6 || d.UsedCores != 2 {
		t.Errorf("mask 6 = %+v, want CoreMask 6 and 2 cores", d)
	}
	if _, err := device.ReadCoreMasks("k", "d-0,AWSNeuron,x"); err == nil {
		t.Error("an unreadable list is an error")
	}
}

// TestListWriters: a placed device's device-list entry as each writer block writes it.
func TestListWriters(t *testing.T) {
	k := device.Kind{Name: "ACME"}
	d := device.Listed{UUID: "a-0", Type: "ACME-9", Mem: 100, Cores: 2, Mask: 6}
	for _, tc := range []struct {
		name  string
		write device.ListWriter
		want  codec.ContainerDevice
	}{
		{"by name", device.ListByName, codec.ContainerDevice{UUID: "a-0", Type: "ACME", UsedMem: 100, UsedCores: 2}},
		{"by model", device.ListByModel, codec.ContainerDevice{UUID: "a-0", Type: "ACME-9", UsedMem: 100, UsedCores: 2}},
		{"core mask", device.ListCoreMask, codec.ContainerDevice{UUID: "a-0", Type: "ACME", UsedMem: 100, UsedCores: 6}},
	} {
		if got := tc.write(&k, d); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	d.Type = ""
	if got := device.ListByModel(&k, d); got.Type != "ACME" {
		t.Errorf("by model without a registered type: %q, want the Kind's name", got.Type)
	}
	if k.Writer() == nil {
		t.Error("a Kind without WriteList has no writer")
	}
}
