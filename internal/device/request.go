package device

// The request reader's building blocks: a container's resources read as a family's
// GenerateResourceRequests and MutateAdmission do (pkg/device/<vendor>/device.go). A Kind's ReadRequest is
// one of the readers below (WholeRequest, SlotRequest, a Share), or the family's own composed of them.

import (
	"fmt"
	"math/bits"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Report records a problem found reading an object: the field and what is wrong with it. An interface, so
// that a reader's collector is one allocation per object read, not a closure and its captures.
type Report interface {
	Report(field, format string, args ...any)
}

// ReportFunc is a func as a Report.
type ReportFunc func(field, format string, args ...any)

// Report calls f.
func (f ReportFunc) Report(field, format string, args ...any) { f(field, format, args...) }

// MaxRequestValue bounds every managed request (a device count, MiB, percent): 2^40 MiB is a million times
// the largest device, and far enough below int64's limit that sums over containers and devices never wrap.
const MaxRequestValue int64 = 1 << 40

// MaxCount bounds a container's device count: no node has more.
const MaxCount = 1 << 16

// Reading is one container of a pod being read for a Kind.
type Reading struct {
	C *corev1.Container
	// Path is where the container sits in the pod: "spec.containers" or "spec.initContainers".
	Path string
	// Annos are the pod's annotations.
	Annos map[string]string
	Bad   Report
}

// Field names one of the container's resources in a problem.
func (r *Reading) Field(res string) string {
	return fmt.Sprintf("%s[%s].resources[%s]", r.Path, r.C.Name, res)
}

// Names reports whether the container's limits or requests name the resource.
func (r *Reading) Names(res string) bool {
	if res == "" {
		return false
	}
	_, l := r.C.Resources.Limits[corev1.ResourceName(res)]
	_, q := r.C.Resources.Requests[corev1.ResourceName(res)]
	return l || q
}

// Quantity is the container's limit for a resource, else its request, with its value clamped to what a
// request can mean (a clamp is reported).
func (r *Reading) Quantity(res string) (resource.Quantity, int64, bool) {
	q, ok := r.C.Resources.Limits[corev1.ResourceName(res)]
	if !ok {
		q, ok = r.C.Resources.Requests[corev1.ResourceName(res)]
	}
	if !ok {
		return q, 0, false
	}
	v, clamped := CheckedQuantity(q, MaxRequestValue)
	if clamped {
		r.Bad.Report(r.Field(res), "%s is too large to be meant; clamped to %d", q.String(), v)
	}
	return q, v, true
}

// Value is Quantity's value; false when res is "" or the container does not name it.
func (r *Reading) Value(res string) (int64, bool) {
	if res == "" {
		return 0, false
	}
	_, v, ok := r.Quantity(res)
	return v, ok
}

// HasUnit reports whether the container's quantity for res is written with a unit ("16Gi", "1k"), not as a
// bare number.
func (r *Reading) HasUnit(res string) bool {
	q, ok := r.C.Resources.Limits[corev1.ResourceName(res)]
	if !ok {
		q = r.C.Resources.Requests[corev1.ResourceName(res)]
	}
	return strings.IndexFunc(q.String(), func(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }) >= 0
}

// CheckedQuantity reads a quantity as an integer (fractions rounded up, as Kubernetes does for counts) and
// clamps it to [-limit, limit]; clamped reports a value that did not fit, so it is never wrapped around.
func CheckedQuantity(q resource.Quantity, limit int64) (v int64, clamped bool) {
	if v, ok := q.AsInt64(); ok {
		if v > limit {
			return limit, true
		}
		if v < -limit {
			return -limit, true
		}
		return v, false
	}
	dec := q.AsDec()
	switch {
	case dec.Sign() > 0 && q.CmpInt64(limit) > 0:
		return limit, true
	case dec.Sign() < 0 && q.CmpInt64(-limit) < 0:
		return -limit, true
	}
	return q.Value(), false
}

// Ask is what one container asks of each device of a Kind, as the family's reader reads it.
type Ask struct {
	Count int
	// MemoryMiB is an absolute request per device, already multiplied by the memory factor; 0 when
	// MemoryPercent applies (or the type shares no memory).
	MemoryMiB     int64
	MemoryPercent int64
	// MemoryDefaulted is set when the container named no memory and got the family's default.
	MemoryDefaulted bool
	Cores           int64
	// CoresOfDevice is set when Cores is a percentage of each device's own cores (AMD: compute units).
	CoresOfDevice bool
	// Template is the fixed slice the memory was rounded up to (Ascend's vNPU templates).
	Template string
	// ByCores is set when the container asked by the Kind's cores resource alone (AWS Neuron's neuroncore).
	ByCores bool
	// WebhookMemory is the memory HAMi's webhook counts against the quota per device, in the quota key's
	// units, when MemoryMiB is not it: a family whose request is resolved per node (Enflame DRS-GCU counts the
	// slices or the memory as written, and with WebhookCores the cores as written,
	// pkg/device/enflame/device.go:321-365); 0 otherwise.
	WebhookMemory int64
	// WebhookCores are cores above 100 the container names, which HAMi's webhook counts against the quota as
	// written (GenerateResourceRequests does not clamp them); 0 otherwise.
	WebhookCores int64
	// DeviceCores, when above 0, are every device's total cores for the container's cores gates (cores,
	// exclusive, compute) in place of the registered ones: Ascend's Fit reads 100 in hami-core mode
	// (effectiveTotalCore, pkg/device/ascend/device.go:539-560 at v2.10.0).
	DeviceCores int64
	// Slots are the slots the request charges each of its devices for the pod's later containers; 0 is one
	// (Enflame DRS-GCU: the profile's size, pkg/device/enflame/device.go:371-380 at v2.10.0).
	Slots int32
	// Profile is a request for one of the node's fixed slices, which the Kind's resolve row (Row.Resolve)
	// matches on each node; nil for most Kinds.
	Profile *Profile
}

// Profile is a request for one of a node's fixed slices of a device (Enflame DRS-GCU's profiles), as the
// family's reader read it and, on a node, as its resolve row resolved it.
type Profile struct {
	// Slices > 0 asks for a slice of that many units by number (enflame.com/drs-gcu); otherwise Memory and
	// Cores (as written, 0 when not named) are what the slice must hold.
	Slices        int64
	Memory, Cores int64
	// Set by the resolve row on a node: the slice's name and ID, its size in units, and the minors of the
	// node's devices by index, for the bind's annotations.
	Name, ID string
	Size     int64
	Minors   map[int]string
}

// RequestReader reads one container's request for a Kind; ok is false when the container asks for none.
// Values HAMi refuses are reported (r.Bad) and replaced by the nearest it accepts.
type RequestReader func(k *Kind, r *Reading) (a Ask, ok bool)

// Asker reports whether a container asks for a Kind at all (HAMi turns each container into one request per
// type; a container naming two types is a mistake the engine reports).
type Asker func(k *Kind, r *Reading) bool

// NamesCount: the container asks for the Kind when it names the Kind's count resource.
func NamesCount(k *Kind, r *Reading) bool { return r.Names(k.Count) }

// NamesCountOrCores: the count resource or the cores resource alone (AWS Neuron's neuroncore).
func NamesCountOrCores(k *Kind, r *Reading) bool { return r.Names(k.Count) || r.Names(k.Cores) }

// Counter reads a container's device count; ok is false when it asks for no device. byCores is set when the
// count came from the cores resource (CountOrCores).
type Counter func(k *Kind, r *Reading) (count int64, byCores, ok bool)

// ReadCount is the count resource: a negative count is reported and ignored, one above MaxCount clamped.
func ReadCount(k *Kind, r *Reading) (int64, bool, bool) {
	count, _ := r.Value(k.Count)
	return checkCount(k, r, count, false)
}

// CountOrCores is ReadCount, or for a container naming the cores resource alone the devices the family's
// webhook (Mutate) turns those cores into (AWS Neuron); a refusal is reported and nothing is asked.
func CountOrCores(k *Kind, r *Reading) (int64, bool, bool) {
	count, _ := r.Value(k.Count)
	if count > 0 || r.Names(k.Count) || k.Mutate == nil {
		return checkCount(k, r, count, false)
	}
	cores, _ := r.Value(k.Cores)
	in := Request{Cores: cores, HasCores: true, Mode: k.ModeOf(r.Annos)}
	if why := k.Mutate(&in); why != "" {
		r.Bad.Report(r.Field(k.Cores), "%s: HAMi's webhook refuses the pod", why)
		return 0, false, false
	}
	return checkCount(k, r, in.Count, true)
}

func checkCount(k *Kind, r *Reading, count int64, byCores bool) (int64, bool, bool) {
	if count <= 0 {
		if count < 0 {
			r.Bad.Report(r.Field(k.Count), "negative %s count %d is ignored", k.Word, count)
		}
		return 0, false, false
	}
	if count > MaxCount {
		r.Bad.Report(r.Field(k.Count), "%d %ss is more than any node has; clamped to %d", count, k.Word, MaxCount)
		count = MaxCount
	}
	return count, byCores, true
}

// WholeRequest reads a type that is never shared: every container takes its devices whole (memory 100 %,
// cores 100), as for device plugins that only count devices (Enflame, Kunlunxin XPU, MetaX GPU).
func WholeRequest(k *Kind, r *Reading) (Ask, bool) {
	count, _, ok := ReadCount(k, r)
	return Ask{Count: int(count), MemoryPercent: 100, Cores: 100}, ok
}

// SlotRequest reads a type shared by its slots alone: a container takes no memory and no cores (Biren,
// Vastai: GenerateResourceRequests asks for none and Fit checks none).
func SlotRequest(k *Kind, r *Reading) (Ask, bool) {
	count, _, ok := ReadCount(k, r)
	return Ask{Count: int(count)}, ok
}

// Share is HAMi's common reading of a shared device (GenerateResourceRequests, then the family's
// MutateAdmission when the Kind has Mutate): count, memory (times the memory factor) or memory percentage,
// 100 % when neither is named, cores (the Kind's DefaultCores when unnamed), clamped to 100. Each field is a
// building block a family swaps in; the zero Share is Hygon's reading.
type Share struct {
	// Count reads the device count; nil is ReadCount.
	Count Counter
	// Check runs after the count: the family's webhook checks on the pod (MetaX sGPU: CheckQos).
	Check func(k *Kind, r *Reading)
	// PerDevice turns the container's memory and cores into each device's; nil keeps them as written
	// (Mthreads: SplitEvenly).
	PerDevice func(count, mem, cores int64) (int64, int64)
	// MiB turns a named memory into MiB; nil is TimesFactor (MetaX sGPU: BareTimesFactor).
	MiB func(k *Kind, r *Reading, mem int64) int64
	// Unnamed is the MiB of a container naming no memory; nil gives 100 % of each device (Ascend: the
	// device's allocatable memory, AllocatableMemory).
	Unnamed func(k *Kind) int64
	// Round rounds a MiB request to what the device hands out, with the slice's name (Ascend: its
	// templates); nil keeps it.
	Round func(k *Kind, r *Reading, mib int64) (int64, string)
	// Cores adjusts the cores after the default applied (Iluvatar: ManyTakeWholeCores); nil keeps them.
	Cores func(count, cores int64) int64
}

// Read is the Share's RequestReader.
func (s Share) Read(k *Kind, r *Reading) (Ask, bool) {
	counter := s.Count
	if counter == nil {
		counter = ReadCount
	}
	count, byCores, ok := counter(k, r)
	if !ok {
		return Ask{}, false
	}
	if s.Check != nil {
		s.Check(k, r)
	}
	a := Ask{Count: int(count), ByCores: byCores}
	mem, hasMem := r.Value(k.Memory)
	pct, hasPct := r.Value(k.MemoryPercent)
	cores, hasCores := r.Value(k.Cores)
	if k.Mutate != nil {
		in := Request{Count: count, Memory: mem, Cores: cores, HasMemory: hasMem, HasCores: hasCores, Mode: k.ModeOf(r.Annos)}
		if byCores {
			in.Count, in.HasCores = 0, true
		}
		if why := k.Mutate(&in); why != "" {
			r.Bad.Report(r.Field(k.Count), "%s: HAMi's webhook refuses the pod", why)
		}
		if in.Whole {
			a.Cores, a.CoresOfDevice = 100, true // every core of each device
			return a, true
		}
		mem, cores, hasMem, hasCores = min(in.Memory, MaxRequestValue), min(in.Cores, MaxRequestValue), in.HasMemory, in.HasCores
	}
	if s.PerDevice != nil {
		mem, cores = s.PerDevice(count, mem, cores)
	}
	switch {
	case hasMem && mem > 0:
		miB := s.MiB
		if miB == nil {
			miB = TimesFactor
		}
		a.MemoryMiB = miB(k, r, mem)
	case hasPct && pct > 0:
		a.MemoryPercent = min(pct, 100)
	case k.Memory == "" && k.MemoryPercent == "":
		// the type has no memory resource (AWS Neuron): the container asks for none
	case s.Unnamed != nil:
		a.MemoryMiB, a.MemoryDefaulted = s.Unnamed(k), true
	default:
		a.MemoryPercent, a.MemoryDefaulted = 100, true
	}
	if hasMem && mem < 0 {
		r.Bad.Report(r.Field(k.Memory), "negative memory %d is ignored", mem)
	}
	if s.Round != nil && a.MemoryMiB > 0 {
		a.MemoryMiB, a.Template = s.Round(k, r, a.MemoryMiB)
	}
	if !hasCores {
		cores = k.DefaultCores
	}
	written := cores
	if s.Cores != nil {
		cores = s.Cores(count, cores)
	}
	switch {
	case cores < 0:
		r.Bad.Report(r.Field(k.Cores), "negative cores %d are ignored", cores)
		cores = 0
	case cores > 100:
		if written > 100 { // not when the family's webhook wrote them (Iluvatar's count x 100)
			r.Bad.Report(r.Field(k.Cores), "%d%% is above 100%%: HAMi ignores the container's request", written)
		}
		a.WebhookCores = cores // the webhook's quota check counts it as written
		cores = 100
	}
	a.Cores = cores
	return a, true
}

// ShareRequest is the zero Share's reader, the default of a Kind without ReadRequest.
func ShareRequest(k *Kind, r *Reading) (Ask, bool) { return Share{}.Read(k, r) }

// TimesFactor is a memory request times the Kind's MemoryFactor, clamped to MaxRequestValue.
func TimesFactor(k *Kind, _ *Reading, mem int64) int64 {
	if f := max(k.MemoryFactor, 1); mem <= MaxRequestValue/f {
		return mem * f
	}
	return MaxRequestValue
}

// BareTimesFactor applies MemoryFactor only to a bare number; a quantity with a unit ("16Gi") is bytes, read
// in MiB (MetaX sGPU's vmemory: a bare value is GiB).
func BareTimesFactor(k *Kind, r *Reading, mem int64) int64 {
	if r.HasUnit(k.Memory) {
		return mem / (1 << 20)
	}
	return TimesFactor(k, r, mem)
}

// SplitEvenly: the memory and cores resources are the container's total over its devices, each device
// takes a count-th of them (Mthreads' GenerateResourceRequests).
func SplitEvenly(count, mem, cores int64) (int64, int64) {
	if count > 1 {
		return mem / count, cores / count
	}
	return mem, cores
}

// ManyTakeWholeCores is Iluvatar's webhook on a container asking for more than one device: it sets the cores
// resource to count x 100 (pkg/device/iluvatar/device.go:92-98), which its Fit clamps to each device's 100 %
// and the webhook's quota check counts per device as written (pkg/scheduler/webhook.go:157-165).
func ManyTakeWholeCores(count, cores int64) int64 {
	if count > 1 {
		return min(count, MaxCount) * 100
	}
	return cores
}

// CheckQos reports a pod QoS policy the Kind's webhook refuses (one not in QosPolicies).
func CheckQos(k *Kind, r *Reading) {
	if v, ok := r.Annos[k.QosAnnotation]; ok && k.QosAnnotation != "" && k.QosIndex(r.Annos) < 0 {
		r.Bad.Report("metadata.annotations["+k.QosAnnotation+"]", "%q is not one of %s: HAMi's webhook refuses the pod", v, strings.Join(k.QosPolicies, ", "))
	}
}

// ModeOf is the pod's value of the Kind's ModeAnnotation ("" when the Kind has none), for its Mutate.
func (k *Kind) ModeOf(annos map[string]string) string {
	if k.ModeAnnotation == "" {
		return ""
	}
	return annos[k.ModeAnnotation]
}

// Admitter is the family's admission webhook on one container (MutateAdmission): why it refuses the
// container, "" when it lets it through. Values are read as written (no clamp, no report).
type Admitter func(k *Kind, c *corev1.Container, annos map[string]string) string

// AdmitCount runs the Kind's Mutate on a container that names a positive count.
func AdmitCount(k *Kind, c *corev1.Container, annos map[string]string) string {
	return admit(k, c, annos, false)
}

// AdmitCountOrCores is AdmitCount, or Mutate on the cores alone of a container that names no count but
// cores (AWS Neuron's neuroncore).
func AdmitCountOrCores(k *Kind, c *corev1.Container, annos map[string]string) string {
	return admit(k, c, annos, true)
}

func admit(k *Kind, c *corev1.Container, annos map[string]string, byCores bool) string {
	if k.Mutate == nil {
		return ""
	}
	value := func(res string) (int64, bool) {
		if res == "" {
			return 0, false
		}
		q, ok := c.Resources.Limits[corev1.ResourceName(res)]
		if !ok {
			q, ok = c.Resources.Requests[corev1.ResourceName(res)]
		}
		if !ok {
			return 0, false
		}
		return QuantityValue(q), true
	}
	count, _ := value(k.Count)
	mem, hasMem := value(k.Memory)
	cores, hasCores := value(k.Cores)
	in := Request{Count: count, Memory: mem, Cores: cores, HasMemory: hasMem, HasCores: hasCores, Mode: k.ModeOf(annos)}
	r := Reading{C: c}
	switch {
	case count <= 0 && byCores && !r.Names(k.Count) && hasCores:
		in = Request{Cores: cores, HasCores: true, Mode: k.ModeOf(annos)}
	case count <= 0:
		return ""
	}
	return k.Mutate(&in)
}

// QuantityValue reads a quantity as an integer, rounding up fractions as Kubernetes does for counts.
func QuantityValue(q resource.Quantity) int64 {
	if v, ok := q.AsInt64(); ok {
		return v
	}
	return q.Value()
}

// AllocationReader reads the value of one of the Kind's device-list annotations (key names it in errors).
type AllocationReader func(key, value string) (codec.PodDevices, error)

// ReadDeviceList is HAMi's device list as written (codec.ParsePodDevices).
func ReadDeviceList(key, value string) (codec.PodDevices, error) {
	return codec.ParsePodDevices(key, value)
}

// ReadCoreMasks is a device list whose cores field is a bit mask of the device's cores (AWS Neuron's
// NeuronCores): each entry's CoreMask keeps the mask and UsedCores becomes the number of cores it holds.
func ReadCoreMasks(key, value string) (codec.PodDevices, error) {
	entries, err := codec.ParsePodDevices(key, value)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		for j := range e {
			e[j].CoreMask = max(e[j].UsedCores, 0)
			e[j].UsedCores = int64(bits.OnesCount64(uint64(e[j].CoreMask)))
		}
	}
	return entries, nil
}

// ListWriter writes one device a placement gives a container into the pod's device list (HAMi's
// PatchAnnotations: the entry's type and cores fields).
type ListWriter func(k *Kind, d Listed) codec.ContainerDevice

// Listed is one placed device as a ListWriter sees it.
type Listed struct {
	UUID string
	// Type is the device's registered type (its model).
	Type       string
	Mem, Cores int64
	// Mask is the bit mask of the device's cores given, for a Kind with CoresMask; 0 otherwise.
	Mask int64
}

// ListByName writes the Kind's Name as the entry's type and the cores given, HAMi's common entry and the
// default of a Kind without WriteList.
func ListByName(k *Kind, d Listed) codec.ContainerDevice {
	return codec.ContainerDevice{UUID: d.UUID, Type: k.Name, UsedMem: d.Mem, UsedCores: d.Cores}
}

// ListByModel writes each device's registered type instead of the Kind's Name, the Name when it registers
// none (AMD's allocType).
func ListByModel(k *Kind, d Listed) codec.ContainerDevice {
	e := ListByName(k, d)
	if d.Type != "" {
		e.Type = d.Type
	}
	return e
}

// ListCoreMask writes the bit mask of the cores given in the cores field (AWS Neuron's NeuronCores), the
// inverse of ReadCoreMasks.
func ListCoreMask(k *Kind, d Listed) codec.ContainerDevice {
	e := ListByName(k, d)
	e.UsedCores = d.Mask
	return e
}
