package snapshot

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The hand decoder of a snapshot's pods: json-iterator's reflection over corev1.Pod was the largest share of a
// read command's CPU (about 6 µs a genbig pod), and it built every field trimPod then dropped. This reads a
// pod's JSON straight into the trimmed corev1.Pod: the fields trim.go keeps are read by hand (the few rare
// nested ones, such as affinity and security contexts, by json-iterator on their own text), the fields it drops
// are checked for syntax and skipped without being built. What it does not take (jsonScan's doc) goes to the
// reflection decoder whole, so every pod read is the object that decoder and trimPod make of it, and every
// error is its error (TestHandDecoderMatchesReflection, FuzzHandDecoder).
//
// Nodes are read the same way (a node is kept whole: its rare parts by json-iterator). An object of another
// kind is only scanned for its kind and apiVersion, so that it is decoded once, as its kind, instead of first
// as a pod.

var (
	podNames       = namesOf(corev1.Pod{})
	metaNames      = namesOf(metav1.ObjectMeta{})
	ownerNames     = namesOf(metav1.OwnerReference{})
	specNames      = namesOf(corev1.PodSpec{})
	containerNames = namesOf(corev1.Container{})
	portNames      = namesOf(corev1.ContainerPort{})
	resourcesNames = namesOf(corev1.ResourceRequirements{})
	tolNames       = namesOf(corev1.Toleration{})
	statusNames    = namesOf(corev1.PodStatus{})
	condNames      = namesOf(corev1.PodCondition{})
)

// scanned is what scanObject made of an item: a pod (or, read with a goroutine's cache, its record) or a
// node, or the kind and apiVersion of another object.
type scanned struct {
	pod              *corev1.Pod
	rec              *podRecord
	node             *corev1.Node
	kind, apiVersion string
	tolText          string // the pod's toleration list's text, when shared (jsonScan.tolText)
}

// scanObject reads one item by hand; ok is false when the reflection decoder must read it. With a goroutine's
// cache, a pod is read into the cache's scratch pod, its annotations into a list and its containers into the
// scratch list, and what comes out is the pod's record (compactWith): the record a snapshot keeps, without a
// corev1.Pod, an annotation map or a container list made for the pod and dropped.
func scanObject(js []byte, st *listCache) (out scanned, ok bool) {
	s := &jsonScan{b: js, st: st}
	if !s.object() {
		return out, false
	}
	var (
		kind, apiVersion string
		pod              *corev1.Pod
		node             *corev1.Node
		seen             uint64
		kindRead         bool
		podParts         bool // a spec or status read as a pod's, before the kind
	)
	// The kind is first in what the API server and kubectl write; metadata before it is read into a pod (and
	// moved to a node), a spec or status before it as a pod's, and an object of another kind then goes to
	// decodeKind.
	isPod := func() bool { return !kindRead || kind == "Pod" }
	newPod := func() *corev1.Pod {
		if pod == nil {
			if st != nil {
				pod = &st.pod
				*pod = corev1.Pod{}
			} else {
				pod = &corev1.Pod{}
			}
		}
		return pod
	}
	newNode := func() *corev1.Node {
		if node == nil {
			node = &corev1.Node{}
		}
		return node
	}
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			break
		}
		switch string(key) {
		case "kind":
			s.once(&seen, 0)
			kind, kindRead = s.shared(), true
		case "apiVersion":
			s.once(&seen, 1)
			apiVersion = s.shared()
		case "metadata":
			s.once(&seen, 2)
			switch {
			case isPod():
				s.annoList = st != nil
				s.objectMeta(&newPod().ObjectMeta)
				s.annoList = false
			case kind == "Node":
				s.objectMeta(&newNode().ObjectMeta)
			default:
				s.skip()
			}
		case "spec":
			s.once(&seen, 3)
			switch {
			case isPod():
				podParts = podParts || !kindRead
				s.podSpec(&newPod().Spec)
			case kind == "Node":
				s.nodeSpec(&newNode().Spec)
			default:
				s.skip()
			}
		case "status":
			s.once(&seen, 4)
			switch {
			case isPod():
				podParts = podParts || !kindRead
				s.podStatus(&newPod().Status)
			case kind == "Node":
				s.nodeStatus(&newNode().Status)
			default:
				s.skip()
			}
		default:
			s.other(key, podNames)
		}
	}
	s.end()
	if s.bad {
		return out, false
	}
	switch {
	case kind == "Pod":
		p := newPod()
		p.Kind, p.APIVersion = kind, apiVersion
		trimPod(p) // nothing to drop: what it drops was skipped; kept so that the two can never disagree
		if st != nil {
			rec := st.into
			if rec == nil {
				rec = new(podRecord)
			}
			*rec = compactWith(p, s.annos, st)
			p.Spec.Containers = nil // the scratch list, not the pod's
			return scanned{rec: rec, tolText: s.tolText}, true
		}
		return scanned{pod: p, tolText: s.tolText}, true
	case kind == "Node" && !podParts:
		nd := newNode()
		if pod != nil {
			nd.ObjectMeta = pod.ObjectMeta // read before the kind
			if st != nil {
				nd.Annotations = mapOfList(s.annos) // read as a pod's, into a list
			}
		}
		nd.Kind, nd.APIVersion = kind, apiVersion
		return scanned{node: nd}, true
	}
	return scanned{kind: kind, apiVersion: apiVersion}, true
}

func (s *jsonScan) objectMeta(m *metav1.ObjectMeta) {
	if !s.object() {
		return
	}
	var seen uint64
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			return
		}
		switch string(key) {
		case "name":
			s.once(&seen, 0)
			m.Name = s.str()
		case "generateName":
			s.once(&seen, 1)
			m.GenerateName = s.shared()
		case "namespace":
			s.once(&seen, 2)
			m.Namespace = s.shared()
		case "selfLink":
			s.once(&seen, 3)
			m.SelfLink = s.str()
		case "uid":
			s.once(&seen, 4)
			m.UID = types.UID(s.str())
		case "resourceVersion":
			s.once(&seen, 5)
			m.ResourceVersion = s.str()
		case "generation":
			s.once(&seen, 6)
			s.int64To(&m.Generation)
		case "creationTimestamp":
			s.once(&seen, 7)
			s.time(&m.CreationTimestamp)
		case "deletionTimestamp":
			s.once(&seen, 8)
			m.DeletionTimestamp = s.timePtr()
		case "deletionGracePeriodSeconds":
			s.once(&seen, 9)
			m.DeletionGracePeriodSeconds = s.int64Ptr()
		case "labels":
			s.once(&seen, 10)
			m.Labels = s.strMap(true)
		case "annotations":
			s.once(&seen, 11)
			if s.annoList {
				s.annos = s.strList()
			} else {
				m.Annotations = s.strMap(false)
			}
		case "ownerReferences":
			s.once(&seen, 12)
			m.OwnerReferences = s.owners()
		case "finalizers":
			s.once(&seen, 13)
			m.Finalizers = s.strs()
		case "managedFields":
			s.once(&seen, 14)
			s.dropped(key, &metav1.ObjectMeta{}) // stripNoise drops them
		default:
			s.other(key, metaNames)
		}
	}
}

// strMap reads a map of strings (null: nil; {}: empty, as stringMapDecoder makes them); its keys are shared,
// and its values too when asked (labels repeat by workload; annotations mostly do not, but for
// repeatingAnnotations).
func (s *jsonScan) strMap(sharedValues bool) map[string]string {
	if !s.object() {
		return nil
	}
	type entry struct{ k, v string }
	var buf [mapEntries]entry
	entries := buf[:0]
	for n := 0; ; {
		raw, ok := s.mapKey(&n)
		if !ok {
			break
		}
		var v string
		if sharedValues || isRepeatingAnnotation(raw) {
			v = s.shared()
		} else {
			v = s.str()
		}
		entries = append(entries, entry{raw, v})
	}
	if s.bad {
		return nil
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.k] = e.v
	}
	return m
}

// strList reads a pod's annotations as its record keeps them: key, value, key, value... (null: nil; {}: empty),
// shared as strMap(false) shares them, a repeated key's last value kept, as in a map.
func (s *jsonScan) strList() []string {
	if !s.object() {
		return nil
	}
	var buf [2 * mapEntries]string
	kv := buf[:0]
	for n := 0; ; {
		k, ok := s.mapKey(&n)
		if !ok {
			break
		}
		var v string
		if isRepeatingAnnotation(k) {
			v = s.shared()
		} else {
			v = s.str()
		}
		kv = append(kv, k, v)
	}
	if s.bad {
		return nil
	}
	if len(kv) > 2*mapEntries { // long: its repeated keys found through a map
		m := mapOfList(kv)
		out := make([]string, 0, 2*len(m)) // not kv: buf would then escape
		for k, v := range m {
			out = append(out, k, v)
		}
		return out
	}
	for i := 2; i < len(kv); i += 2 { // a repeated key: its last value, in the first's place
		for j := 0; j < i; j += 2 {
			if kv[j] == kv[i] {
				kv[j+1] = kv[i+1]
				kv = append(kv[:i], kv[i+2:]...)
				i -= 2
				break
			}
		}
	}
	if s.st != nil {
		return s.st.keepList(kv)
	}
	return append(make([]string, 0, len(kv)), kv...)
}

// mapOfList is an annotation list (strList) as a map; nil for nil.
func mapOfList(kv []string) map[string]string {
	if kv == nil {
		return nil
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// mapKey reads a map's next key (escapes allowed, as any map key), shared; ok is false at the map's end.
func (s *jsonScan) mapKey(n *int) (string, bool) {
	c := s.ws()
	if *n > 0 {
		if c != ',' {
			if c == '}' {
				s.i++
				s.depth--
			} else {
				s.fail()
			}
			return "", false
		}
		s.i++
	} else if c == '}' {
		s.i++
		s.depth--
		return "", false
	}
	*n++
	if s.ws() != '"' {
		s.fail()
		return "", false
	}
	k := s.shared()
	if s.ws() != ':' {
		s.fail()
		return "", false
	}
	s.i++
	return k, !s.bad
}

func (s *jsonScan) strs() []string {
	if !s.array() {
		return nil
	}
	out := []string{}
	for n := 0; s.elem(&n); {
		out = append(out, s.shared())
	}
	return out
}

func (s *jsonScan) owners() []metav1.OwnerReference {
	if !s.array() {
		return nil
	}
	out := []metav1.OwnerReference{}
	for n := 0; s.elem(&n); {
		out = append(out, metav1.OwnerReference{})
		o := &out[len(out)-1]
		if !s.object() {
			continue
		}
		var seen uint64
		for m := 0; ; {
			key, ok := s.field(&m)
			if !ok {
				break
			}
			switch string(key) {
			case "apiVersion":
				s.once(&seen, 0)
				o.APIVersion = s.shared()
			case "kind":
				s.once(&seen, 1)
				o.Kind = s.shared()
			case "name": // not shared: a Job's pod has its own owner
				s.once(&seen, 2)
				o.Name = s.str()
			case "uid":
				s.once(&seen, 3)
				o.UID = types.UID(s.str())
			case "controller":
				s.once(&seen, 4)
				o.Controller = s.boolPtr()
			case "blockOwnerDeletion":
				s.once(&seen, 5)
				o.BlockOwnerDeletion = s.boolPtr()
			default:
				s.other(key, ownerNames)
			}
		}
	}
	return exact(out)
}

func (s *jsonScan) podSpec(sp *corev1.PodSpec) {
	if !s.object() {
		return
	}
	var seen uint64
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			return
		}
		switch string(key) {
		case "initContainers":
			s.once(&seen, 0)
			sp.InitContainers = s.containers()
		case "containers":
			s.once(&seen, 1)
			if s.st != nil && sp == &s.st.pod.Spec {
				sp.Containers = s.scratchContainers()
			} else {
				sp.Containers = s.containers()
			}
		case "restartPolicy":
			s.once(&seen, 2)
			sp.RestartPolicy = corev1.RestartPolicy(s.shared())
		case "nodeSelector":
			s.once(&seen, 3)
			sp.NodeSelector = s.strMap(true)
		case "serviceAccountName":
			s.once(&seen, 4)
			sp.ServiceAccountName = s.shared()
		case "nodeName":
			s.once(&seen, 5)
			sp.NodeName = s.shared()
		case "hostNetwork":
			s.once(&seen, 6)
			s.boolTo(&sp.HostNetwork)
		case "hostPID":
			s.once(&seen, 7)
			s.boolTo(&sp.HostPID)
		case "hostIPC":
			s.once(&seen, 8)
			s.boolTo(&sp.HostIPC)
		case "securityContext":
			s.once(&seen, 9)
			s.val(&sp.SecurityContext)
		case "affinity":
			s.once(&seen, 10)
			s.val(&sp.Affinity)
		case "schedulerName":
			s.once(&seen, 11)
			sp.SchedulerName = s.shared()
		case "tolerations":
			s.once(&seen, 12)
			sp.Tolerations = s.sharedTolerations()
		case "priorityClassName":
			s.once(&seen, 13)
			sp.PriorityClassName = s.shared()
		case "priority":
			s.once(&seen, 14)
			sp.Priority = s.int32Ptr()
		case "runtimeClassName":
			s.once(&seen, 15)
			sp.RuntimeClassName = s.strPtr()
		case "preemptionPolicy":
			s.once(&seen, 16)
			sp.PreemptionPolicy = (*corev1.PreemptionPolicy)(s.strPtr())
		case "overhead":
			s.once(&seen, 17)
			sp.Overhead = s.list()
		case "topologySpreadConstraints":
			s.once(&seen, 18)
			s.val(&sp.TopologySpreadConstraints)
		case "os":
			s.once(&seen, 19)
			s.val(&sp.OS)
		case "hostUsers":
			s.once(&seen, 20)
			sp.HostUsers = s.boolPtr()
		case "schedulingGates":
			s.once(&seen, 21)
			s.val(&sp.SchedulingGates)
		case "resourceClaims":
			s.once(&seen, 22)
			s.val(&sp.ResourceClaims)
		case "resources":
			s.once(&seen, 23)
			s.val(&sp.Resources)
		case "hostnameOverride":
			s.once(&seen, 24)
			s.val(&sp.HostnameOverride)
		case "schedulingGroup":
			s.once(&seen, 25)
			s.val(&sp.SchedulingGroup)
		case "evictionResponders":
			s.once(&seen, 26)
			s.val(&sp.EvictionResponders)
		default:
			s.droppedOr(key, &seen, 27, droppedSpec, &corev1.PodSpec{}, specNames)
		}
	}
}

// The fields trimPod drops, by type: the decoder skips them.
var (
	droppedSpec = []string{"volumes", "ephemeralContainers", "terminationGracePeriodSeconds", "activeDeadlineSeconds",
		"dnsPolicy", "serviceAccount", "automountServiceAccountToken", "shareProcessNamespace", "imagePullSecrets",
		"hostname", "subdomain", "hostAliases", "dnsConfig", "readinessGates", "enableServiceLinks", "setHostnameAsFQDN"}
	droppedContainer = []string{"command", "args", "workingDir", "envFrom", "env", "resizePolicy", "volumeMounts",
		"volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
		"terminationMessagePolicy", "imagePullPolicy", "stdin", "stdinOnce", "tty"}
	droppedStatus = []string{"hostIP", "hostIPs", "podIPs", "initContainerStatuses", "containerStatuses", "qosClass",
		"ephemeralContainerStatuses", "resize", "resourceClaimStatuses"}
)

// droppedOr skips key when it is in dropped (its seen bit is first+its place there), and hands any other key to
// other.
func (s *jsonScan) droppedOr(key []byte, seen *uint64, first uint, dropped []string, parent any, known fieldNames) {
	for i, k := range dropped {
		if k == string(key) {
			s.once(seen, first+uint(i))
			s.dropped(key, parent)
			return
		}
	}
	s.other(key, known)
}

// dropped skips a field trimPod drops. Its value is not built, so a value of the wrong type there is not
// refused (the reflection decoder refused it); checkDropped (tests) decodes it into a fresh parent to hold
// that this is the only difference.
func (s *jsonScan) dropped(key []byte, parent any) {
	if !checkDropped {
		s.skip()
		return
	}
	raw := s.raw()
	if s.bad {
		return
	}
	wrapped := append(append(append(append([]byte(`{"`), key...), `":`...), raw...), '}')
	if err := fastJSON.Unmarshal(wrapped, parent); err != nil {
		s.fail()
	}
}

// checkDropped makes the hand decoder refuse what the reflection decoder refuses in a dropped field (tests).
var checkDropped bool

// val reads a rare nested value by json-iterator, on its own text.
func (s *jsonScan) val(ptr any) {
	raw := s.raw()
	if s.bad {
		return
	}
	if err := unmarshalCached(raw, ptr, s.st); err != nil {
		s.fail()
	}
}

// list reads a resource list, decoded once per goroutine for each text (listCache).
func (s *jsonScan) list() corev1.ResourceList {
	if s.null() {
		return nil
	}
	raw := s.raw()
	if s.bad {
		return nil
	}
	if s.st != nil {
		if l, ok := s.st.lists[string(raw)]; ok {
			return l
		}
	}
	var l corev1.ResourceList
	if err := fastJSON.Unmarshal(raw, &l); err != nil {
		s.fail()
		return nil
	}
	if s.st != nil && len(raw) <= maxListText && len(s.st.lists) < maxShared {
		if s.st.lists == nil {
			s.st.lists = map[string]corev1.ResourceList{}
		}
		s.st.lists[string(raw)] = l
	}
	return l
}

func (s *jsonScan) containers() []corev1.Container {
	if !s.array() {
		return nil
	}
	out := []corev1.Container{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.Container{})
		s.container(&out[len(out)-1])
	}
	return exact(out)
}

// scratchContainers is containers read into the goroutine's scratch list (the scratch pod's containers, which
// its record copies); never nil but for null, as containers.
func (s *jsonScan) scratchContainers() []corev1.Container {
	if !s.array() {
		return nil
	}
	out := s.st.containers[:0]
	if out == nil {
		out = make([]corev1.Container, 0, 4)
	}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.Container{})
		s.container(&out[len(out)-1])
	}
	s.st.containers = out
	return out
}

func (s *jsonScan) container(c *corev1.Container) {
	if !s.object() {
		return
	}
	var seen uint64
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			return
		}
		switch string(key) {
		case "name":
			s.once(&seen, 0)
			c.Name = s.shared()
		case "image":
			s.once(&seen, 1)
			c.Image = s.shared()
		case "ports":
			s.once(&seen, 2)
			c.Ports = s.ports()
		case "resources":
			s.once(&seen, 3)
			s.resources(&c.Resources)
		case "restartPolicy":
			s.once(&seen, 4)
			c.RestartPolicy = (*corev1.ContainerRestartPolicy)(s.strPtr())
		case "restartPolicyRules":
			s.once(&seen, 5)
			s.val(&c.RestartPolicyRules)
		case "securityContext":
			s.once(&seen, 6)
			s.val(&c.SecurityContext)
		default:
			s.droppedOr(key, &seen, 7, droppedContainer, &corev1.Container{}, containerNames)
		}
	}
}

func (s *jsonScan) resources(r *corev1.ResourceRequirements) {
	if !s.object() {
		return
	}
	var seen uint64
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			return
		}
		switch string(key) {
		case "limits":
			s.once(&seen, 0)
			r.Limits = s.list()
		case "requests":
			s.once(&seen, 1)
			r.Requests = s.list()
		case "claims":
			s.once(&seen, 2)
			s.val(&r.Claims)
		default:
			s.other(key, resourcesNames)
		}
	}
}

func (s *jsonScan) ports() []corev1.ContainerPort {
	if !s.array() {
		return nil
	}
	out := []corev1.ContainerPort{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.ContainerPort{})
		pt := &out[len(out)-1]
		if !s.object() {
			continue
		}
		var seen uint64
		for m := 0; ; {
			key, ok := s.field(&m)
			if !ok {
				break
			}
			switch string(key) {
			case "name":
				s.once(&seen, 0)
				pt.Name = s.shared()
			case "hostPort":
				s.once(&seen, 1)
				s.int32To(&pt.HostPort)
			case "containerPort":
				s.once(&seen, 2)
				s.int32To(&pt.ContainerPort)
			case "protocol":
				s.once(&seen, 3)
				pt.Protocol = corev1.Protocol(s.shared())
			case "hostIP":
				s.once(&seen, 4)
				pt.HostIP = s.shared()
			default:
				s.other(key, portNames)
			}
		}
	}
	return exact(out)
}

// sharedTolerations reads a toleration list, held once per goroutine for each text: a workload's pods, and
// most pods of a cluster (the two admission adds), carry the same. At its length (exact), so that an append
// copies. The text is kept in tolText, for sharing.compact to hold one list across the goroutines.
func (s *jsonScan) sharedTolerations() []corev1.Toleration {
	if s.st == nil {
		return s.tolerations()
	}
	if s.null() {
		return nil
	}
	raw := s.raw()
	if s.bad {
		return nil
	}
	if v, ok := s.st.tols[string(raw)]; ok {
		s.tolText = v.text
		return v.list
	}
	sub := jsonScan{b: raw, st: s.st, depth: s.depth}
	ts := sub.tolerations()
	if sub.bad {
		s.fail()
		return nil
	}
	if len(raw) <= maxListText && len(s.st.tols) < maxShared {
		if s.st.tols == nil {
			s.st.tols = map[string]tolerationList{}
		}
		text := string(raw)
		s.st.tols[text] = tolerationList{text: text, list: ts}
		s.tolText = text
	}
	return ts
}

// tolerationList is a shared toleration list and its JSON text.
type tolerationList struct {
	text string
	list []corev1.Toleration
}

func (s *jsonScan) tolerations() []corev1.Toleration {
	if !s.array() {
		return nil
	}
	out := []corev1.Toleration{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.Toleration{})
		t := &out[len(out)-1]
		if !s.object() {
			continue
		}
		var seen uint64
		for m := 0; ; {
			key, ok := s.field(&m)
			if !ok {
				break
			}
			switch string(key) {
			case "key":
				s.once(&seen, 0)
				t.Key = s.shared()
			case "operator":
				s.once(&seen, 1)
				t.Operator = corev1.TolerationOperator(s.shared())
			case "value":
				s.once(&seen, 2)
				t.Value = s.shared()
			case "effect":
				s.once(&seen, 3)
				t.Effect = corev1.TaintEffect(s.shared())
			case "tolerationSeconds":
				s.once(&seen, 4)
				t.TolerationSeconds = s.int64Ptr()
			default:
				s.other(key, tolNames)
			}
		}
	}
	return exact(out)
}

func (s *jsonScan) podStatus(st *corev1.PodStatus) {
	if !s.object() {
		return
	}
	var seen uint64
	for n := 0; ; {
		key, ok := s.field(&n)
		if !ok {
			return
		}
		switch string(key) {
		case "observedGeneration":
			s.once(&seen, 0)
			s.int64To(&st.ObservedGeneration)
		case "phase":
			s.once(&seen, 1)
			st.Phase = corev1.PodPhase(s.shared())
		case "conditions":
			s.once(&seen, 2)
			st.Conditions = s.conditions()
		case "message":
			s.once(&seen, 3)
			st.Message = s.str()
		case "reason":
			s.once(&seen, 4)
			st.Reason = s.shared()
		case "nominatedNodeName":
			s.once(&seen, 5)
			st.NominatedNodeName = s.shared()
		case "podIP":
			s.once(&seen, 6)
			st.PodIP = s.str()
		case "startTime":
			s.once(&seen, 7)
			st.StartTime = s.timePtr()
		case "extendedResourceClaimStatus":
			s.once(&seen, 8)
			s.val(&st.ExtendedResourceClaimStatus)
		case "allocatedResources":
			s.once(&seen, 9)
			st.AllocatedResources = s.list()
		case "resources":
			s.once(&seen, 10)
			s.val(&st.Resources)
		case "nodeAllocatableResourceClaimStatuses":
			s.once(&seen, 11)
			s.val(&st.NodeAllocatableResourceClaimStatuses)
		case "volumeHealth":
			s.once(&seen, 12)
			s.val(&st.VolumeHealth)
		default:
			s.droppedOr(key, &seen, 13, droppedStatus, &corev1.PodStatus{}, statusNames)
		}
	}
}

func (s *jsonScan) conditions() []corev1.PodCondition {
	if !s.array() {
		return nil
	}
	out := []corev1.PodCondition{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.PodCondition{})
		c := &out[len(out)-1]
		if !s.object() {
			continue
		}
		var seen uint64
		for m := 0; ; {
			key, ok := s.field(&m)
			if !ok {
				break
			}
			switch string(key) {
			case "type":
				s.once(&seen, 0)
				c.Type = corev1.PodConditionType(s.shared())
			case "observedGeneration":
				s.once(&seen, 1)
				s.int64To(&c.ObservedGeneration)
			case "status":
				s.once(&seen, 2)
				c.Status = corev1.ConditionStatus(s.shared())
			case "lastProbeTime":
				s.once(&seen, 3)
				s.time(&c.LastProbeTime)
			case "lastTransitionTime":
				s.once(&seen, 4)
				s.time(&c.LastTransitionTime)
			case "reason":
				s.once(&seen, 5)
				c.Reason = s.shared()
			case "message":
				s.once(&seen, 6)
				c.Message = s.str()
			default:
				s.other(key, condNames)
			}
		}
	}
	return exact(out)
}

// isRepeatingAnnotation says whether an annotation's values repeat from pod to pod (repeatingAnnotations).
func isRepeatingAnnotation(key string) bool {
	for _, k := range repeatingAnnotations {
		if k == key {
			return true
		}
	}
	return false
}

// exact is a decoded slice at its length: what append grew past it would stay allocated with the snapshot.
func exact[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}
