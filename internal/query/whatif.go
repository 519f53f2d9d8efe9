package query

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
)

// MaxCopies bounds how many copies what-if places to count "how many fit now" (engine.Cluster.Capacity).
const MaxCopies = 10000

// WhatIfPod is the hypothetical pod of what-if, as its flags and the UI's form describe it: one container that
// asks for Count devices of one type, with memory and cores per device.
type WhatIfPod struct {
	Namespace, Name string
	// Device names the device type: a Kind's name or vendor (device.Find); empty for the first kind (NVIDIA).
	Device string
	Count  int64
	// Memory is per device in the type's unit, MemoryPercent per device in percent; 0 leaves each to HAMi's
	// default.
	Memory, MemoryPercent int64
	// Cores is per device in percent; below 0 leaves it to HAMi's default (0 is a request of its own).
	Cores       int64
	Annotations map[string]string
}

// The fields of a FieldError.
const (
	FieldDevice        = "device"
	FieldMemory        = "memory"
	FieldMemoryPercent = "memory-percentage"
	FieldCores         = "cores"
)

// FieldError is a WhatIfPod field the chosen device type cannot express; each surface names the field in its
// own words (a flag, a form field).
type FieldError struct {
	Field string // FieldDevice, FieldMemory, FieldMemoryPercent or FieldCores
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Pod builds the pod with the resource names of its device type among kinds (engine.Config.Kinds: the
// cluster's names for NVIDIA, the families' for the others).
func (w WhatIfPod) Pod(kinds []device.Kind) (*corev1.Pod, error) {
	k, err := device.Find(kinds, w.Device)
	if err != nil {
		return nil, &FieldError{Field: FieldDevice, Err: withDeviceSuggestion(err, w.Device, kinds)}
	}
	kind := kinds[k]
	limits := corev1.ResourceList{corev1.ResourceName(kind.Count): *resource.NewQuantity(w.Count, resource.DecimalSI)}
	set := func(field, res string, v int64) error {
		if res == "" {
			return &FieldError{Field: field, Err: fmt.Errorf("%s devices have no such resource", kind.Name)}
		}
		limits[corev1.ResourceName(res)] = *resource.NewQuantity(v, resource.DecimalSI)
		return nil
	}
	if w.Memory > 0 {
		if err := set(FieldMemory, kind.Memory, w.Memory); err != nil {
			return nil, err
		}
	}
	if w.MemoryPercent > 0 {
		if err := set(FieldMemoryPercent, kind.MemoryPercent, w.MemoryPercent); err != nil {
			return nil, err
		}
	}
	if w.Cores >= 0 {
		if err := set(FieldCores, kind.Cores, w.Cores); err != nil {
			return nil, err
		}
	}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Limits: limits}}}}}
	if len(w.Annotations) > 0 {
		pod.Annotations = make(map[string]string, len(w.Annotations))
		for k, v := range w.Annotations {
			pod.Annotations[k] = v
		}
	}
	return pod, nil
}

// withDeviceSuggestion puts the closest device types and vendors first in an unknown device's error: "hygn" is
// most likely hygon, and the list of every known type that follows is long.
func withDeviceSuggestion(err error, typed string, kinds []device.Kind) error {
	var names, known []string
	for i := range kinds {
		if strings.EqualFold(kinds[i].Name, typed) || strings.EqualFold(kinds[i].Vendor, typed) {
			return err // known but ambiguous: device.Find lists the types to choose from
		}
		known = append(known, strings.ToLower(kinds[i].Name))
		names = append(names, strings.ToLower(kinds[i].Name), strings.ToLower(kinds[i].Vendor))
	}
	d := resolve.DidYouMean(resolve.Closest(typed, SortedUnique(names), resolve.DefaultSuggestions))
	if d == "" {
		return err
	}
	return fmt.Errorf("unknown device %q: %s (known: %s)", typed, d, strings.Join(known, ", "))
}

// NamespaceNameError says why ns cannot name a namespace (Kubernetes wants an RFC 1123 label: lower-case
// letters, digits and '-', at most 63 characters), or nil when it can.
func NamespaceNameError(ns string) error {
	if ns == "" {
		return fmt.Errorf("namespace: empty")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("no namespace can be named %q: a name is lower-case letters, digits and '-', starts and ends with a letter or digit, at most 63 characters", ns)
	}
	return nil
}
