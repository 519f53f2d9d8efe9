package kubefit

import (
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantitySums is the Usage of before its integer sums: a map of resource.Quantity sums, the reference.
type quantitySums struct {
	pods int
	sums corev1.ResourceList
}

func (r *quantitySums) add(l corev1.ResourceList, sign int) {
	r.pods += sign
	for name, q := range l {
		r.addOne(name, q, sign)
	}
}

func (r *quantitySums) addOne(name corev1.ResourceName, q resource.Quantity, sign int) {
	sum := r.sums[name]
	if sign > 0 {
		sum.Add(q)
	} else {
		sum.Sub(q)
	}
	r.sums[name] = sum
}

// TestUsageMatchesQuantitySums: a node's usage summed as integers answers what Quantity sums answer (the
// value compared, the milli-CPU and memory, the free amount a failure message shows, in its format) through
// random pods added and removed, with values in every format, values finer than a milli-unit and values
// whose sum leaves int64's milli range.
func TestUsageMatchesQuantitySums(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 10))
	// The first 14 values are whole milli-units. None is negative: the API server refuses negative requests,
	// and resource.Quantity rounds a negative sum differently by how it happens to hold it (-750m is 1 as a
	// sum that went through inf.Dec), which only the same sequence of Quantity operations reproduces.
	values := []string{"0", "1", "2", "500m", "1.5", "250m", "4Gi", "1G", "100Mi", "2e3", "1Ki", "3k", "64", "0.5Gi",
		"1n", "0.0001", "3u", "123456789012345678", "9e15", "9000000000000000"}
	names := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, "nvidia.com/gpu", "example.com/foo"}
	capacities := []resource.Quantity{{}, resource.MustParse("10"), resource.MustParse("64Gi"), resource.MustParse("1500m")}
	// A cheap round's values are all whole milli-units.
	pick := func(cheap bool) string {
		if cheap {
			return values[rng.IntN(14)]
		}
		return values[rng.IntN(len(values))]
	}
	pod := func(cheap bool) *corev1.Pod {
		p := &corev1.Pod{}
		for i := 1 + rng.IntN(3); i > 0; i-- {
			l := corev1.ResourceList{}
			for _, n := range names {
				if rng.IntN(3) == 0 {
					l[n] = resource.MustParse(pick(cheap))
				}
			}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: l}})
		}
		if rng.IntN(6) == 0 {
			p.Spec.InitContainers = []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(pick(cheap))}}}}
		}
		return p
	}
	exactSeen := 0
	for round := 0; round < 300; round++ {
		u, ref := &Usage{}, &quantitySums{sums: corev1.ResourceList{}}
		var held []*corev1.Pod
		cheap := round%3 != 0
		for op := 0; op < 40; op++ {
			switch {
			case len(held) > 0 && rng.IntN(3) == 0: // remove a pod
				i := rng.IntN(len(held))
				p := held[i]
				held = append(held[:i], held[i+1:]...)
				u.Add(ReadRequests(p), -1)
				ref.add(Requests(p), -1)
			case rng.IntN(5) == 0: // one container's request, as Check sums them
				n := names[rng.IntN(len(names))]
				q := resource.MustParse(pick(cheap))
				u.Pods++
				ref.pods++
				u.addQuantity(n, q, +1)
				ref.addOne(n, q, +1)
			default:
				p := pod(cheap)
				held = append(held, p)
				u.Add(ReadRequests(p), +1)
				ref.add(Requests(p), +1)
			}
			cpu, mem := ref.sums[corev1.ResourceCPU], ref.sums[corev1.ResourceMemory]
			if u.Pods != ref.pods || u.cpu != cpu.MilliValue() || u.mem != mem.Value() {
				t.Fatalf("round %d op %d: pods %d cpu %d mem %d, Quantity sums %d %d %d", round, op, u.Pods, u.cpu, u.mem, ref.pods, cpu.MilliValue(), mem.Value())
			}
			for _, n := range names {
				want := ref.sums[n]
				got := u.Requested(n)
				if got.Cmp(want) != 0 || got.Format != want.Format || got.String() != want.String() || u.value(n) != want.Value() {
					t.Fatalf("round %d op %d: %s is %v (%s, value %d), Quantity sum %v (%s, value %d)", round, op, n,
						got.String(), got.Format, u.value(n), want.String(), want.Format, want.Value())
				}
				for _, c := range capacities {
					f, g := c.DeepCopy(), c.DeepCopy()
					f.Sub(got)
					g.Sub(want)
					if f.String() != g.String() {
						t.Fatalf("round %d op %d: %s free of %s is %s, with Quantity sums %s", round, op, n, c.String(), f.String(), g.String())
					}
				}
			}
			c := u.Clone()
			c.Add(ReadRequests(pod(true)), +1)
			if got := u.Requested(corev1.ResourceCPU); got.Cmp(cpu) != 0 {
				t.Fatalf("round %d op %d: a clone's change reached the usage", round, op)
			}
		}
		if u.exact != nil {
			exactSeen++
		}
	}
	if exactSeen < 20 || exactSeen > 280 {
		t.Errorf("%d of 300 rounds ended with Quantity sums: the generator tests one path too little", exactSeen)
	}
}

// TestReadRequestsIsRequests: the integer read of a pod's requests is Requests' sum, format included.
func TestReadRequestsIsRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
	}{
		{"empty", &corev1.Pod{}},
		{"two containers", mkPod("p", rl("cpu", "500m", "memory", "1Gi"), func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1.5", "memory", "1G")}})
		})},
		{"a zero first", mkPod("p", rl("memory", "0"), func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: corev1.ResourceRequirements{Requests: rl("memory", "2Gi")}})
		})},
		{"finer than milli", mkPod("p", rl("cpu", "1n"))},
	} {
		u, ref := &Usage{}, &quantitySums{sums: corev1.ResourceList{}}
		u.Add(ReadRequests(tc.pod), +1)
		ref.add(Requests(tc.pod), +1)
		for n, want := range ref.sums {
			if got := u.Requested(n); got.Cmp(want) != 0 || got.Format != want.Format {
				t.Errorf("%s: %s is %s (%s), Requests %s (%s)", tc.name, n, got.String(), got.Format, want.String(), want.Format)
			}
		}
	}
}

// TestAmountsEmpty: only a pod that requests nothing has empty amounts; a request of zero, or one that does not
// fit milli-units (kept as Quantities), is a value.
func TestAmountsEmpty(t *testing.T) {
	pod := func(l corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: l}}}}}
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		empty bool
	}{
		{"no container", &corev1.Pod{}, true},
		{"no requests", pod(nil), true},
		{"cpu", pod(corev1.ResourceList{"cpu": resource.MustParse("1")}), false},
		{"zero cpu", pod(corev1.ResourceList{"cpu": resource.MustParse("0")}), false},
		{"finer than a milli-unit", pod(corev1.ResourceList{"cpu": resource.MustParse("1n")}), false},
	} {
		a := ReadRequests(tc.pod)
		if got := a.Empty(); got != tc.empty {
			t.Errorf("%s: Empty() = %v, want %v", tc.name, got, tc.empty)
		}
	}
}
