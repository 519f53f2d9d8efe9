// Package awsneuron describes AWS Inferentia and Trainium devices as HAMi v2.10 schedules them
// (pkg/device/awsneuron/device.go): no register annotation (the devices are derived from the node's capacity
// of aws.amazon.com/neuron, each with capacity[neuroncore] / capacity[neuron] NeuronCores, 2 when the node
// lists no cores); a container asks for whole devices (aws.amazon.com/neuron) or for NeuronCores
// (aws.amazon.com/neuroncore: up to one device's cores on one device, more only in whole devices); a device
// list entry records the cores given as a bit mask; several devices are taken as one contiguous run of
// unused devices (Inferentia: anywhere; Trainium: 4, 8 or 16 from a multiple of the count); the bind writes
// the device or core indices, node and time the Neuron device plugin reads.
package awsneuron

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Name is HAMi's CommonWord and device type for Neuron devices.
const Name = "AWSNeuron"

// DefaultCoresPerDevice are the NeuronCores of a device when the node lists none (and the cores per device
// the webhook splits a neuroncore request by: HAMi's defaultCoresPerNeuronDevice).
const DefaultCoresPerDevice = 2

// InstanceTypeLabel is the node label whose value (inf2.xlarge, trn1.32xlarge ...) is a device's type here:
// its family decides how several devices are chosen.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

// Annotations the bind writes.
const (
	// Allocated is both the to-allocate and the allocated list: HAMi writes only this one.
	Allocated = "hami.io/aws-neuron-devices-allocated"
	// IDsAnnotation lists the device indices (a count request) or the node-wide NeuronCore indices (a cores
	// request) of every container with devices.
	IDsAnnotation           = "AWS_NEURON_IDS"
	ResourceTypeAnnotation  = "NEURON_RESOURCE_TYPE"
	AllocTimeAnnotation     = "NEURON_ALLOC_TIME"
	AllocatedFlagAnnotation = "NEURON_ALLOCATED"
	PredicateNodeAnnotation = "aws.amazon.com/predicate-node"
)

// Family is AWS Neuron.
type Family struct{}

func (Family) Name() string    { return "awsneuron" }
func (Family) Section() string { return "awsneuron" }

// Kinds returns the Neuron Kind.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var s struct {
		ResourceCountName string `json:"resourceCountName"`
		ResourceCoreName  string `json:"resourceCoreName"`
	}
	if err := device.Decode("awsneuron", section, &s); err != nil {
		return nil, err
	}
	count := device.Or(s.ResourceCountName, "aws.amazon.com/neuron")
	cores := device.Or(s.ResourceCoreName, "aws.amazon.com/neuroncore")
	return []device.Kind{{
		Vendor: "awsneuron", Name: Name, Word: "Neuron device",
		ReadRegister:   device.FromNode(func(n *corev1.Node) []codec.DeviceInfo { return NodeDevices(n, count, cores) }),
		ToAllocate:     Allocated,
		Allocated:      Allocated,
		UseUUID:        "aws.amazon.com/use-neuron-uuid",
		NoUseUUID:      "aws.amazon.com/nouse-neuron-uuid",
		Count:          count,
		Cores:          cores,
		CoresUnit:      "NeuronCores",
		Asks:           device.NamesCountOrCores, // a container may ask by neuroncore alone
		Admit:          device.AdmitCountOrCores,
		ReadRequest:    device.Share{Count: device.CountOrCores}.Read,
		ReadAllocation: device.ReadCoreMasks,
		WriteList:      device.ListCoreMask,
		CoresMask:      true,
		WholeCores:     WholeCores,
		Mutate:         Mutate,
		SelectInOrder:  Select,
		SelectRule:     "are a contiguous run (Inferentia: any start; Trainium: 4, 8 or 16 from a multiple of the count)",
		FitFailure:     FitFailure,
		BindExtra:      bindExtra,
		ExtraKeys:      []string{IDsAnnotation, ResourceTypeAnnotation, AllocTimeAnnotation, AllocatedFlagAnnotation, PredicateNodeAnnotation},
	}}, nil
}

// NodeDevices is HAMi's GetNodeDevices for Neuron: capacity[count] devices named <node>-AWSNeuron-<i>, each
// with as many slots and cores as it has NeuronCores (capacity[cores] / capacity[count], else 2), no memory,
// and the node's instance type as its type.
func NodeDevices(n *corev1.Node, countRes, coreRes string) []codec.DeviceInfo {
	count, ok := device.CapacityCount(n, countRes, device.MaxCapacityDevices)
	if !ok {
		return nil
	}
	per := int64(DefaultCoresPerDevice)
	if total, ok := device.CapacityCount(n, coreRes, 62*device.MaxCapacityDevices); ok && total/count > 0 {
		per = min(total/count, 62) // a core mask must fit the device list's number
	}
	typ := n.Labels[InstanceTypeLabel]
	if typ == "" {
		typ = Name
	}
	return device.CapacityDevices(n, countRes, Name, codec.DeviceInfo{Count: int32(per), Devcore: per, Type: typ, Health: true})
}

// Mutate is HAMi's MutateAdmission and GenerateResourceRequests for Neuron. A count request takes its
// devices whole. A cores request alone (Count 0) takes one device for up to DefaultCoresPerDevice cores,
// else cores / DefaultCoresPerDevice whole devices; another number of cores is refused.
func Mutate(r *device.Request) string {
	if r.Count > 0 {
		r.Whole = true
		return ""
	}
	switch c := r.Cores; {
	case c <= 0:
		return "neuroncore must be greater than 0"
	case c <= DefaultCoresPerDevice:
		r.Count = 1
	case c%DefaultCoresPerDevice != 0:
		return fmt.Sprintf("neuroncore must be 1 or a multiple of %d, got %d", DefaultCoresPerDevice, c)
	default:
		r.Count, r.Whole = c/DefaultCoresPerDevice, true
	}
	return ""
}

// WholeCores are the NeuronCores per device GenerateResourceRequests asks for a request of whole devices,
// which HAMi's webhook counts against limits.<neuroncore> (pkg/device/awsneuron/device.go:287-332): a count
// asks coresPerAWSNeuron, learned by GetNodeDevices from the first node it registers (163-166; 0 before any,
// so the webhook checks nothing, pkg/scheduler/webhook.go:181-183), a neuroncore request DefaultCoresPerDevice
// on each of its devices (its cores in all).
func WholeCores(learned int64, byCores bool) int64 {
	if byCores {
		return DefaultCoresPerDevice
	}
	return learned
}

// Select is HAMi v2.10.0's choice of Neuron devices (Fit and graphSelect, pkg/device/awsneuron/device.go:
// 390-473), given the node's devices by Index in the order HAMi hands them to Fit (its score-sorted list) with
// whether each passed every gate. One device: the walk from the end of the list, the first that passed.
// Several: graphSelect, which reads positions in that list: the first run of count positions whose devices
// passed (on Inferentia, a model naming "inf", from any position; elsewhere only 4, 8 or 16, from a multiple
// of the count), and then takes, for each position p of the run, the device whose Index is p (HAMi mistakes
// the position for the index; a run of positions no Index has takes fewer devices). nil when none.
func Select(order []int, fit []bool, count int, model string) []int {
	if count <= 0 || len(order) != len(fit) {
		return nil
	}
	if count == 1 {
		for p := len(order) - 1; p >= 0; p-- {
			if fit[p] {
				return []int{order[p]}
			}
		}
		return nil
	}
	step := 1
	if !strings.Contains(model, "inf") && !strings.Contains(model, "Inf") {
		switch count {
		case 4, 8, 16:
			step = count
		default:
			return nil
		}
	}
	for start := 0; start+count <= len(order); start += step {
		run := true
		for p := start; p < start+count && run; p++ {
			run = fit[p]
		}
		if !run {
			continue
		}
		var out []int
		for p := start; p < start+count; p++ {
			for _, idx := range order {
				if idx == p {
					out = append(out, p)
					break
				}
			}
		}
		return out
	}
	return nil
}

// FitFailure is HAMi v2.10.0's reason when Neuron's Fit places nothing: a request of several devices never
// reaches the per-device checks, and graphSelect's failure is one NumaNotFit over the node's devices
// (pkg/device/awsneuron/device.go:450-456); one device keeps the checks' own reasons.
func FitFailure(_ []device.Failure, asked int) (string, int) {
	if asked > 1 {
		return "NumaNotFit", 1
	}
	return "", 0
}

// bindExtra is HAMi's PatchAnnotations for Neuron: the indices of every container's devices (a count
// request) or NeuronCores (a cores request: device index x cores per device + the core's bit), the resource
// type for cores, the node, the bind time in nanoseconds and the plugin's not-yet-allocated flag.
func bindExtra(k *device.Kind, containers [][]device.Placed, annos map[string]string, now int64) map[string]string {
	var ids []string
	out := map[string]string{}
	for _, c := range containers {
		for _, d := range c {
			if !d.ByCores {
				ids = append(ids, strconv.Itoa(d.Index))
				continue
			}
			for bit := 0; bit < 62; bit++ {
				if d.Mask&(1<<bit) != 0 {
					ids = append(ids, strconv.FormatInt(int64(d.Index)*d.DeviceCores+int64(bit), 10))
					out[ResourceTypeAnnotation] = k.Cores
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out[IDsAnnotation] = strings.Join(ids, ",")
	out[AllocTimeAnnotation] = strconv.FormatInt(now*1e9, 10)
	out[AllocatedFlagAnnotation] = "false"
	out[PredicateNodeAnnotation] = annos[codec.PodNodeAnnotation]
	return out
}
