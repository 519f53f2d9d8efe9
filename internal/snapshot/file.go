package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	jsoniter "github.com/json-iterator/go"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type metaObject interface {
	SetManagedFields([]metav1.ManagedFieldsEntry)
}

// LoadFile reads a snapshot: a Kubernetes List (YAML or JSON) or multi-document YAML, so that
// `kubectl get nodes,pods,resourcequotas -A -o yaml` output is a valid snapshot too.
func LoadFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	// A regular file over the cap is refused before any of it is decoded; a pipe, when the cap is crossed.
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, overCap(path, MaxFileBytes)
	}
	return LoadReader(f, path)
}

// MaxFileBytes caps what a snapshot file (or standard input) may hold: a cluster of 10,000 nodes and
// 200,000 pods is well below it, /dev/zero or a wrong file is stopped before memory runs out.
var MaxFileBytes int64 = 512 << 20

// readSomething refuses a file whose every object is of a kind a snapshot does not read (a Deployment manifest
// passed as --snapshot): read on, it would be a cluster of no nodes that answers every question wrongly. An
// empty List (a snapshot of an empty cluster) is still a snapshot.
func (s *Snapshot) readSomething(name string) error {
	read := len(s.Nodes) + s.Pods.Len() + len(s.Quotas) + len(s.ConfigMaps) + len(s.Events) + len(s.Queues) + len(s.PodGroups) +
		len(s.PriorityClasses) + len(s.PDBs)
	if read == 0 && s.Skipped > 0 {
		return fmt.Errorf("%s: none of its %d object(s) is a Node, Pod, ResourceQuota, ConfigMap, Event, PriorityClass, PodDisruptionBudget or Volcano Queue/PodGroup; "+
			"a snapshot is `kubectl hami snapshot` output or `kubectl get nodes,pods,resourcequotas -A -o yaml` (for a pod manifest, use what-if -f)", name, s.Skipped)
	}
	return nil
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return out
}

// shiftYAMLLine rewrites "yaml: line N: ..." so N counts from the start of the file.
func shiftYAMLLine(msg string, docLine int) string {
	var n int
	if i := strings.Index(msg, "line "); i >= 0 {
		if _, err := fmt.Sscanf(msg[i:], "line %d", &n); err == nil {
			return fmt.Sprintf("%d: %s", n+docLine-1, msg)
		}
	}
	return fmt.Sprintf("%d: %s", docLine, msg)
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// fastJSON decodes with json-iterator, several times faster than encoding/json on large snapshots; on any
// error the slower standard decoder runs again to produce its precise message and offset.
var fastJSON = decodeMapsConfig()

func unmarshal(data []byte, into any) error {
	if err := fastJSON.Unmarshal(data, into); err != nil {
		if stdErr := json.Unmarshal(data, into); stdErr != nil {
			return stdErr
		}
		return err
	}
	return nil
}

// decodeDocument decodes one document: a single object, or every item of a List, in order.
func decodeDocument(js []byte) ([]any, error) {
	iter := fastJSON.BorrowIterator(js)
	defer fastJSON.ReturnIterator(iter)
	var objs []any
	isList := false
	for field := iter.ReadObject(); field != ""; field = iter.ReadObject() {
		if field != "items" || iter.WhatIsNext() != jsoniter.ArrayValue {
			iter.Skip()
			continue
		}
		isList = true
		for i := 0; iter.ReadArray(); i++ {
			raw := iter.SkipAndReturnBytes()
			if iter.Error != nil {
				break
			}
			o, err := decodeObject(raw)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			objs = append(objs, o)
		}
	}
	if iter.Error != nil && !errors.Is(iter.Error, io.EOF) {
		// The standard library's message carries the offset, for the line.
		var tm typeMeta
		if stdErr := json.Unmarshal(js, &tm); stdErr != nil {
			return nil, stdErr
		}
		return nil, iter.Error
	}
	if !isList {
		o, err := decodeObject(js)
		if err != nil {
			return nil, err
		}
		return []any{o}, nil
	}
	return objs, nil
}

// skipped marks an object of a kind no read command needs.
type skipped struct{}

// decodeObject decodes one object by its kind. Pods are most of any snapshot: the hand decoder
// (decode_pod.go) reads a pod, or the kind of another object, in one pass; what it does not take, the
// reflection decoder reads as a pod first, that pass also reading the kind.
func decodeObject(js []byte) (any, error) { return decodeObjectCached(js, nil) }

// decodeObjectCached is decodeObject with a decoding goroutine's list cache (nil: none).
func decodeObjectCached(js []byte, cache *listCache) (any, error) {
	o, err := decodeShared(js, cache)
	switch sp := o.(type) {
	case sharedPod:
		return sp.Pod, err
	case sharedPodTolerations:
		return sp.Pod, err
	case *podRecord:
		return sp.pod(), err
	case sharedRecordTolerations:
		return sp.rec.pod(), err
	}
	return o, err
}

// sharedPod is a pod the hand decoder read with a goroutine's cache: what it repeats is already held once by
// that goroutine (sharing.compact keeps it as it is). One pointer, so that it is an interface value without an
// allocation.
type sharedPod struct{ *corev1.Pod }

// sharedPodTolerations is a sharedPod with a toleration list, which sharing.compact holds once across the
// goroutines, by its text.
type sharedPodTolerations struct {
	*corev1.Pod
	text string
}

// sharedRecordTolerations is a pod's record (what the hand decoder makes with a goroutine's cache: a
// *podRecord, already shared as a sharedPod) with a toleration list, which sharing.compact holds once across
// the goroutines, by its text.
type sharedRecordTolerations struct {
	rec  *podRecord
	text string
}

// decodeShared is decodeObjectCached, a pod read by hand with a cache marked as shared (with a cache, the hand
// decoder gives its record).
func decodeShared(js []byte, cache *listCache) (any, error) {
	var tm typeMeta
	if !keepWholePods {
		if sc, ok := scanObject(js, cache); ok {
			switch {
			case sc.rec != nil:
				if sc.tolText != "" {
					return sharedRecordTolerations{sc.rec, sc.tolText}, nil
				}
				return sc.rec, nil
			case sc.pod != nil && cache != nil:
				if sc.tolText != "" {
					return sharedPodTolerations{sc.pod, sc.tolText}, nil
				}
				return sharedPod{sc.pod}, nil
			case sc.pod != nil:
				return sc.pod, nil
			case sc.node != nil:
				return sc.node, nil
			}
			tm.Kind, tm.APIVersion = sc.kind, sc.apiVersion
			return decodeKind(js, tm)
		}
	}
	return decodeReflect(js, cache)
}

// decodeReflect is decodeObject by json-iterator's reflection alone: what the hand decoder does not take.
func decodeReflect(js []byte, cache *listCache) (any, error) {
	var tm typeMeta
	if pod := (&corev1.Pod{}); unmarshalCached(js, pod, cache) == nil {
		if pod.Kind == "Pod" {
			stripNoise(pod)
			trimPod(pod)
			return pod, nil
		}
		tm.Kind, tm.APIVersion = pod.Kind, pod.APIVersion
	} else if err := unmarshal(js, &tm); err != nil {
		return nil, err
	}
	return decodeKind(js, tm)
}

// decodeKind decodes an object as its kind says.
func decodeKind(js []byte, tm typeMeta) (any, error) {
	var obj metaObject
	switch tm.Kind {
	case "Node":
		obj = &corev1.Node{}
	case "Pod":
		obj = &corev1.Pod{}
	case "ResourceQuota":
		obj = &corev1.ResourceQuota{}
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	case "Event":
		obj = &corev1.Event{}
	case "Lease":
		obj = &coordinationv1.Lease{}
	case "PriorityClass":
		obj = &schedulingv1.PriorityClass{}
	case "PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "Queue", "PodGroup":
		if tm.APIVersion == "" {
			if err := unmarshal(js, &tm); err != nil {
				return nil, err
			}
		}
		if !isVolcano(tm.APIVersion, tm.Kind) {
			return skipped{}, nil
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: %w", tm.Kind, err)
		}
		u.SetManagedFields(nil)
		return u, nil
	case "":
		return nil, errors.New("object without kind")
	default:
		return skipped{}, nil
	}
	if err := unmarshal(js, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	stripNoise(obj)
	if pod, ok := obj.(*corev1.Pod); ok {
		trimPod(pod)
	}
	return obj, nil
}

func (s *Snapshot) add(obj any) {
	switch o := obj.(type) {
	case *corev1.Node:
		s.Nodes = append(s.Nodes, o)
	case *corev1.Pod:
		if keepWholePods {
			s.Pods.Add(o)
		} else {
			s.Pods.addRecord(compactPod(o)) // the pod read is dropped: the record is what stays
		}
	case *podRecord:
		s.Pods.addRecord(*o)
	case *corev1.ResourceQuota:
		s.Quotas = append(s.Quotas, o)
	case *coordinationv1.Lease:
		s.Leases = append(s.Leases, o)
		s.LeasesRead = true
	case *corev1.ConfigMap:
		s.ConfigMaps = append(s.ConfigMaps, o)
	case *schedulingv1.PriorityClass:
		s.PriorityClasses = append(s.PriorityClasses, o)
	case *policyv1.PodDisruptionBudget:
		s.PDBs = append(s.PDBs, o)
	case *corev1.Event:
		s.Events = append(s.Events, o)
	case *unstructured.Unstructured:
		if o.GetKind() == "Queue" {
			s.Queues = append(s.Queues, o)
		} else {
			s.PodGroups = append(s.PodGroups, o)
		}
	default:
		s.Skipped++
	}
}

// jsonLine is the 1-based line of a JSON decoding error.
func jsonLine(js []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 1
	}
	off = min(off, int64(len(js)))
	return bytes.Count(js[:off], []byte("\n")) + 1
}

// podAt is the i-th pod of pods, marshalled as the pod built for the call.
type podAt struct {
	pods *Pods
	i    int
}

func (p podAt) MarshalJSON() ([]byte, error) { return json.Marshal(p.pods.At(p.i)) }

// withKind marshals an object with apiVersion v1 and its kind set, whatever its TypeMeta says.
type withKind struct {
	kind, apiVersion string // apiVersion "" is v1
	obj              any
}

func (w withKind) MarshalJSON() ([]byte, error) {
	js, err := json.Marshal(w.obj)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	m["apiVersion"] = json.RawMessage(`"v1"`)
	if w.apiVersion != "" {
		m["apiVersion"] = json.RawMessage(`"` + w.apiVersion + `"`)
	}
	m["kind"] = json.RawMessage(`"` + w.kind + `"`)
	return json.Marshal(m)
}
