package snapshot

import (
	corev1 "k8s.io/api/core/v1"
)

// A node's spec and status, read by hand as a pod's are (decode_pod.go). A node is kept whole: the parts no
// genbig or typical GPU node writes in volume (addresses, node info, images, volumes, config, features) are read by
// json-iterator on their own text.

var (
	nodeSpecNames   = namesOf(corev1.NodeSpec{})
	taintNames      = namesOf(corev1.Taint{})
	nodeStatusNames = namesOf(corev1.NodeStatus{})
	nodeCondNames   = namesOf(corev1.NodeCondition{})
)

func (s *jsonScan) nodeSpec(sp *corev1.NodeSpec) {
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
		case "podCIDR":
			s.once(&seen, 0)
			sp.PodCIDR = s.str()
		case "podCIDRs":
			s.once(&seen, 1)
			sp.PodCIDRs = s.strs()
		case "providerID":
			s.once(&seen, 2)
			sp.ProviderID = s.str()
		case "unschedulable":
			s.once(&seen, 3)
			s.boolTo(&sp.Unschedulable)
		case "taints":
			s.once(&seen, 4)
			sp.Taints = s.taints()
		case "configSource":
			s.once(&seen, 5)
			s.val(&sp.ConfigSource)
		case "externalID":
			s.once(&seen, 6)
			sp.DoNotUseExternalID = s.str()
		case "podPreemptionPolicy":
			s.once(&seen, 7)
			s.val(&sp.PodPreemptionPolicy)
		default:
			s.other(key, nodeSpecNames)
		}
	}
}

func (s *jsonScan) taints() []corev1.Taint {
	if !s.array() {
		return nil
	}
	out := []corev1.Taint{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.Taint{})
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
			case "value":
				s.once(&seen, 1)
				t.Value = s.shared()
			case "effect":
				s.once(&seen, 2)
				t.Effect = corev1.TaintEffect(s.shared())
			case "timeAdded":
				s.once(&seen, 3)
				t.TimeAdded = s.timePtr()
			default:
				s.other(key, taintNames)
			}
		}
	}
	return exact(out)
}

func (s *jsonScan) nodeStatus(st *corev1.NodeStatus) {
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
		case "capacity":
			s.once(&seen, 0)
			st.Capacity = s.list()
		case "allocatable":
			s.once(&seen, 1)
			st.Allocatable = s.list()
		case "phase":
			s.once(&seen, 2)
			st.Phase = corev1.NodePhase(s.shared())
		case "conditions":
			s.once(&seen, 3)
			st.Conditions = s.nodeConditions()
		case "addresses":
			s.once(&seen, 4)
			s.val(&st.Addresses)
		case "daemonEndpoints":
			s.once(&seen, 5)
			s.val(&st.DaemonEndpoints)
		case "nodeInfo":
			s.once(&seen, 6)
			s.val(&st.NodeInfo)
		case "images":
			s.once(&seen, 7)
			s.val(&st.Images)
		case "volumesInUse":
			s.once(&seen, 8)
			s.val(&st.VolumesInUse)
		case "volumesAttached":
			s.once(&seen, 9)
			s.val(&st.VolumesAttached)
		case "config":
			s.once(&seen, 10)
			s.val(&st.Config)
		case "runtimeHandlers":
			s.once(&seen, 11)
			s.val(&st.RuntimeHandlers)
		case "features":
			s.once(&seen, 12)
			s.val(&st.Features)
		case "declaredFeatures":
			s.once(&seen, 13)
			st.DeclaredFeatures = s.strs()
		default:
			s.other(key, nodeStatusNames)
		}
	}
}

func (s *jsonScan) nodeConditions() []corev1.NodeCondition {
	if !s.array() {
		return nil
	}
	out := []corev1.NodeCondition{}
	for n := 0; s.elem(&n); {
		out = append(out, corev1.NodeCondition{})
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
				c.Type = corev1.NodeConditionType(s.shared())
			case "status":
				s.once(&seen, 1)
				c.Status = corev1.ConditionStatus(s.shared())
			case "lastHeartbeatTime":
				s.once(&seen, 2)
				s.time(&c.LastHeartbeatTime)
			case "lastTransitionTime":
				s.once(&seen, 3)
				s.time(&c.LastTransitionTime)
			case "reason":
				s.once(&seen, 4)
				c.Reason = s.shared()
			case "message":
				s.once(&seen, 5)
				c.Message = s.str()
			default:
				s.other(key, nodeCondNames)
			}
		}
	}
	return exact(out)
}
