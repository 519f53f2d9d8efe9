package kubefit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Usage is what the pods bound to a node take from it: their number and the sum of their requests.
//
// The sums are integers: a node's usage changes with every pod event and every pod of a snapshot, and
// resource.Quantity arithmetic (a map of Quantities per pod, Add and MilliValue per resource) was most of the
// engine's cost per pod. Each sum is kept in milli-units with the format resource.Quantity's own sum would
// carry (the format of the value added or taken while the sum was zero), so that a failure message shows
// what it showed with Quantities. A value that is not a whole non-negative number of milli-units, or a sum
// past int64's milli range, switches the usage to Quantity sums (exact), as before, from then on.
type Usage struct {
	Pods  int
	sums  []amount
	exact corev1.ResourceList // non-nil once a value did not fit milli-units: every sum, as Quantities
	cpu   int64               // the milli-CPU sum
	mem   int64               // the memory sum's Value (rounded up, as kube-scheduler compares it)
}

// amount is one resource's value in milli-units and the format its Quantity had.
type amount struct {
	name   corev1.ResourceName
	milli  int64
	format resource.Format
}

// Amounts is a pod's requests as NodeResourcesFit sums them (Requests), read once into integers for Usage.
type Amounts struct {
	list  []amount
	exact corev1.ResourceList // the requests as Quantities, when one does not fit milli-units
}

// Empty reports whether the amounts hold no value (a pod that requests nothing).
func (a *Amounts) Empty() bool { return len(a.list) == 0 && a.exact == nil }

// maxWhole is the largest whole value whose milli-units fit an int64.
const maxWhole = (1<<63 - 1) / 1000

// milliOf is a Quantity's value in milli-units, false when it is not a whole number of them, too large, or
// negative (the API server refuses negative requests; a hand-written one keeps resource.Quantity's own
// rounding of negative sums).
func milliOf(q *resource.Quantity) (int64, bool) {
	if q.Sign() < 0 {
		return 0, false
	}
	if v, ok := q.AsInt64(); ok {
		if v > maxWhole || v < -maxWhole {
			return 0, false
		}
		return v * 1000, true
	}
	m := q.MilliValue()
	if q.Cmp(*resource.NewMilliQuantity(m, q.Format)) != 0 {
		return 0, false
	}
	return m, true
}

// addMilli is a+b, false when it overflows.
func addMilli(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// valueOfMilli is resource.Quantity's Value of a milli-unit amount: rounded up, away from zero.
func valueOfMilli(m int64) int64 {
	v := m / 1000
	switch {
	case m%1000 > 0:
		v++
	case m%1000 < 0:
		v--
	}
	return v
}

// ReadRequests is Requests(pod) as Amounts. A pod of the common shape (no init container, overhead or
// pod-level resources) is summed straight from its containers, without a map.
func ReadRequests(pod *corev1.Pod) Amounts {
	if len(pod.Spec.InitContainers) > 0 || pod.Spec.Overhead != nil || pod.Spec.Resources != nil {
		return AmountsOf(Requests(pod))
	}
	var out Amounts
	for i := range pod.Spec.Containers {
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			m, ok := milliOf(&q)
			if ok {
				ok = out.add(name, m, q.Format)
			}
			if !ok {
				return Amounts{exact: Requests(pod)}
			}
		}
	}
	return out
}

// add sums one value into the list, with resource.Quantity's rule for the sum's format; false on overflow.
func (a *Amounts) add(name corev1.ResourceName, m int64, format resource.Format) bool {
	for i := range a.list {
		if s := &a.list[i]; s.name == name {
			if s.milli == 0 {
				s.format = format
			}
			var ok bool
			s.milli, ok = addMilli(s.milli, m)
			return ok
		}
	}
	if a.list == nil {
		a.list = make([]amount, 0, 2) // cpu and memory, mostly
	}
	a.list = append(a.list, amount{name: name, milli: m, format: format})
	return true
}

// AmountsOf reads a list of requests (a sum such as Requests') into Amounts.
func AmountsOf(l corev1.ResourceList) Amounts {
	out := Amounts{list: make([]amount, 0, len(l))}
	for name, q := range l {
		m, ok := milliOf(&q)
		if !ok {
			return Amounts{exact: l}
		}
		out.list = append(out.list, amount{name: name, milli: m, format: q.Format})
	}
	return out
}

// each calls f with every value of the amounts as a Quantity.
func (a *Amounts) each(f func(corev1.ResourceName, resource.Quantity)) {
	if a.exact != nil {
		for name, q := range a.exact {
			f(name, q)
		}
		return
	}
	for _, x := range a.list {
		f(x.name, *resource.NewMilliQuantity(x.milli, x.format))
	}
}

// Add adds (sign +1) or removes (-1) one pod's requests.
func (u *Usage) Add(r Amounts, sign int) {
	u.Pods += sign
	if u.exact == nil && r.exact == nil && u.fits(r.list, sign) {
		for _, x := range r.list {
			s := u.sum(x.name)
			if s.milli == 0 {
				s.format = x.format
			}
			s.milli += int64(sign) * x.milli
		}
		u.cpu, u.mem = u.sumMilli(corev1.ResourceCPU), valueOfMilli(u.sumMilli(corev1.ResourceMemory))
		return
	}
	u.toExact()
	r.each(func(name corev1.ResourceName, q resource.Quantity) { u.addExact(name, q, sign) })
	u.syncExact()
}

// addQuantity adds (sign +1) or removes (-1) one container's request, the way a sum of Quantities does.
func (u *Usage) addQuantity(name corev1.ResourceName, q resource.Quantity, sign int) {
	if u.exact == nil {
		if m, ok := milliOf(&q); ok && u.fits([]amount{{name: name, milli: m}}, sign) {
			s := u.sum(name)
			if s.milli == 0 {
				s.format = q.Format
			}
			s.milli += int64(sign) * m
			u.cpu, u.mem = u.sumMilli(corev1.ResourceCPU), valueOfMilli(u.sumMilli(corev1.ResourceMemory))
			return
		}
		u.toExact()
	}
	u.addExact(name, q, sign)
	u.syncExact()
}

// fits reports whether adding sign times every amount keeps each sum within int64.
func (u *Usage) fits(list []amount, sign int) bool {
	for _, x := range list {
		if x.milli == -1<<63 {
			return false
		}
		if _, ok := addMilli(u.sumMilli(x.name), int64(sign)*x.milli); !ok {
			return false
		}
	}
	return true
}

// sum is the resource's sum, added at zero when the usage has none.
func (u *Usage) sum(name corev1.ResourceName) *amount {
	for i := range u.sums {
		if u.sums[i].name == name {
			return &u.sums[i]
		}
	}
	u.sums = append(u.sums, amount{name: name})
	return &u.sums[len(u.sums)-1]
}

// sumMilli is the resource's sum in milli-units (the Quantity sums are not read here).
func (u *Usage) sumMilli(name corev1.ResourceName) int64 {
	for i := range u.sums {
		if u.sums[i].name == name {
			return u.sums[i].milli
		}
	}
	return 0
}

// toExact switches the usage to Quantity sums, each the value and format its milli-unit sum had.
func (u *Usage) toExact() {
	if u.exact != nil {
		return
	}
	u.exact = make(corev1.ResourceList, len(u.sums))
	for _, s := range u.sums {
		u.exact[s.name] = *resource.NewMilliQuantity(s.milli, s.format)
	}
	u.sums = nil
}

func (u *Usage) addExact(name corev1.ResourceName, q resource.Quantity, sign int) {
	sum := u.exact[name]
	if sign > 0 {
		sum.Add(q)
	} else {
		sum.Sub(q)
	}
	u.exact[name] = sum
}

func (u *Usage) syncExact() {
	cpu, mem := u.exact[corev1.ResourceCPU], u.exact[corev1.ResourceMemory]
	u.cpu, u.mem = cpu.MilliValue(), mem.Value()
}

// Requested is the sum of the bound pods' requests of one resource, as a Quantity.
func (u *Usage) Requested(name corev1.ResourceName) resource.Quantity {
	if u.exact != nil {
		return u.exact[name]
	}
	for _, s := range u.sums {
		if s.name == name {
			return *resource.NewMilliQuantity(s.milli, s.format)
		}
	}
	return resource.Quantity{}
}

// value is Requested(name).Value() without building the Quantity where the sum is an integer.
func (u *Usage) value(name corev1.ResourceName) int64 {
	if u.exact != nil {
		q := u.exact[name]
		return q.Value()
	}
	return valueOfMilli(u.sumMilli(name))
}

// Clone is a copy of the usage that can change on its own.
func (u *Usage) Clone() Usage {
	c := *u
	c.sums = append([]amount(nil), u.sums...)
	if u.exact != nil {
		c.exact = make(corev1.ResourceList, len(u.exact))
		for k, q := range u.exact {
			c.exact[k] = q.DeepCopy()
		}
	}
	return c
}
