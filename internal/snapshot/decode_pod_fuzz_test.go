package snapshot

import (
	"reflect"
	"testing"
)

// FuzzHandDecoder holds the hand decoder to the reflection decoder on any input: what it takes must decode
// to the same trimmed pod or node (read twice, the second time through the goroutine's lists and strings), or, for
// another kind, to the same object once decoded as that kind; what the reflection decoder refuses it must
// not take. checkDropped makes it check the fields it drops as the reflection decoder checks them, so the
// one difference it is allowed in use (a value of the wrong type in a dropped field is not refused) is the
// only one. A pod taken is also what its compact record builds, made from the pod read (compactPod) and made
// by the decoder itself with a goroutine's cache (scanObject's record, read twice: the second time through the
// cache's strings, lists and scratch pod).
func FuzzHandDecoder(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"job-000001","namespace":"team-1","annotations":{"hami.io/vgpu-node":"node-00001",` +
			`"hami.io/vgpu-devices-allocated":"GPU-node-00001-1,NVIDIA,3072,10:;","hami.io/bind-phase":"success"}},"spec":{"schedulerName":"hami-scheduler",` +
			`"nodeName":"node-00001","containers":[{"name":"main","image":"train:1","resources":{"limits":{"nvidia.com/gpu":"1","nvidia.com/gpumem":"3072"}}}]},` +
			`"status":{"phase":"Running"}}`,
		`{"kind":"Pod","metadata":{"uid":"u","creationTimestamp":"2026-11-20T08:00:00Z","deletionTimestamp":null,"labels":{"a":"b","c":null},` +
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"x","controller":true,"blockOwnerDeletion":false}],` +
			`"finalizers":["f",null],"managedFields":[{"manager":"kubectl","operation":"Apply"}]},"spec":{"volumes":[{"name":"v","emptyDir":{}}],` +
			`"initContainers":[{"name":"i","restartPolicy":"Always","env":[{"name":"A","value":"1"}],"livenessProbe":{"periodSeconds":5}}],` +
			`"containers":[{"name":"c","ports":[{"containerPort":8080,"hostPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"1"},"limits":null,"claims":[{"name":"g"}]},` +
			`"securityContext":{"privileged":true}},null],"tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],` +
			`"affinity":{"nodeAffinity":{}},"priority":-5,"preemptionPolicy":"Never","runtimeClassName":null,"overhead":{},"hostNetwork":true,"hostUsers":false,` +
			`"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"z","whenUnsatisfiable":"DoNotSchedule"}]},` +
			`"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","lastTransitionTime":"2026-11-20T08:00:00+01:00","reason":"Unschedulable","message":"m"}],` +
			`"startTime":"2026-11-20T08:00:00.5Z","qosClass":"Burstable","containerStatuses":[{"name":"c","ready":true}],"hostIPs":[{"ip":"1.2.3.4"}],"podIP":"10.0.0.1"}}`,
		`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n","annotations":{"hami.io/node-nvidia-register":"[{\"id\":\"GPU-0\",\"type\":\"A100\"}]"}},` +
			`"spec":{"unschedulable":true,"taints":[{"key":"k","value":"v","effect":"NoSchedule","timeAdded":"2026-11-20T08:00:00Z"}],"podCIDRs":["10.0.0.0/24"]},` +
			`"status":{"allocatable":{"cpu":"8"},"capacity":{"cpu":"8"},"conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-20T08:00:00Z"}],` +
			`"addresses":[{"type":"InternalIP","address":"10.0.0.1"}],"nodeInfo":{"kubeletVersion":"v1.34.0"},"images":[{"names":["a"],"sizeBytes":5}]}}`,
		`{"metadata":{"name":"n"},"status":{"capacity":{"cpu":"1"}},"kind":"Node"}`, `{"kind":"Node","metadata":{"annotations":{"a":"\u00e9\\n\/"}}}`,
		`{"metadata":{"name":"late"},"kind":"Pod"}`, `{"kind":"Pod","Kind":"Pod"}`, `{"kind":"Pod","metadata":{"Name":"x"}}`,
		`{"kind":"Pod","metadata":{"name":"a","name":"b"}}`, `{"kind":"Pod","spec":{"priority":1.0}}`, `{"kind":"Pod","spec":{"priority":2147483648}}`,
		`{"kind":"Pod","spec":{"volumes":5}}`, `{"kind":"Pod","spec":{"containers":[{"command":"x"}]}}`, `{"kind":"Pod","metadata":{"name":"\u00e9\n"}}`,
		`{"kind":"Pod","metadata":{"annotations":{"a\u0062":"c"}}}`, `{"kind":"Pod","metadata":{"creationTimestamp":"yesterday"}}`,
		`{"kind":"Pod","status":{"startTime":"2026-11-20T08:00:00Z"}} x`, `{"kind":"Pod","spec":{"hostPID":tru}}`, `{"kind":"Pod","spec":{"os":{"name":"linux"},"x":[1,-0.5e3,"\t"]}}`,
		`{"kind":"Queue","apiVersion":"scheduling.volcano.sh/v1beta1","metadata":{"name":"q"},"spec":{"weight":1}}`, `{"kind":"ConfigMap","data":{"a":"b"}}`,
		`null`, `[]`, `{}`, `{"kind":null}`, `{"kind":"Pod","metadata":null,"spec":null,"status":null}`, `{"kind":"Pod","spec":{"containers":[]}}`,
		`{"kind":"Pod","metadata":{"annotations":{"a":"1","b":"2","a":"3","hami.io/vgpu-node":"n","hami.io/vgpu-node":"m"}}}`,
		`{"kind":"Pod","metadata":{"annotations":{"k0":"v0","k1":"v1","k2":"v2","k3":"v3","k4":"v4","k5":"v5","k6":"v6","k7":"v7","k8":"v8","k9":"v9","k10":"v10","k11":"v11","k12":"v12","k13":"v13","k14":"v14","k15":"v15","k16":"v16","k17":"v17","k18":"v18","k19":"v19","k3":"again"}}}`, `{"kind":"Pod","metadata":{"annotations":{"k0":"v0","k1":"v1","k2":"v2","k3":"v3","k4":"v4","k5":"v5","k6":"v6","k7":"v7","k8":"v8","k9":"v9","k10":"v10","k11":"v11","k12":"v12","k13":"v13","k14":"v14","k15":"v15","k16":"v16","k17":"v17","k18":"v18","k19":"v19"}}}`,
		`{"metadata":{"name":"n","annotations":{"a":"1","a":"2"}},"kind":"Node"}`, `{"kind":"Pod","metadata":{"annotations":null}}`,
		`{"kind":"Pod","metadata":{"annotations":{}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDropped = true
		defer func() { checkDropped = false }()
		js := []byte(s)
		var cache listCache
		sc, ok := scanObject(js, nil)
		rc, rok := scanObject(js, &cache)
		if ok != rok || (sc.pod != nil) != (rc.rec != nil) || (sc.node != nil) != (rc.node != nil) {
			t.Fatalf("%q: taken %v (pod %v, node %v) without a cache, %v (record %v, node %v) with one", s, ok, sc.pod != nil,
				sc.node != nil, rok, rc.rec != nil, rc.node != nil)
		}
		if !ok {
			return // the reflection decoder reads it, as before
		}
		want, wantErr := decodeReflect(js, nil)
		var hand any
		switch {
		case sc.pod != nil:
			hand = sc.pod
		case sc.node != nil:
			hand = sc.node
		}
		if hand != nil {
			if wantErr != nil {
				t.Fatalf("%q: the hand decoder takes what the reflection decoder refuses (%v)", s, wantErr)
			}
			if !reflect.DeepEqual(hand, want) {
				t.Fatalf("%q: decoded differently:\n hand:       %+v\n reflection: %+v", s, hand, want)
			}
			if sc.node != nil && !reflect.DeepEqual(rc.node, want) {
				t.Fatalf("%q: decoded differently with a cache:\n hand:       %+v\n reflection: %+v", s, rc.node, want)
			}
			again, ok := scanObject(js, &cache)
			if !ok || (sc.pod != nil && again.rec == nil) || (sc.node != nil && !reflect.DeepEqual(again.node, want)) {
				t.Fatalf("%q: read again through the goroutine's cache: %v, %+v", s, ok, again)
			}
			if sc.pod != nil { // kept as a compact record (pods.go), built whole again for each reader
				for name, r := range map[string]podRecord{"compactPod": compactPod(sc.pod), "the decoder": *rc.rec, "the decoder again": *again.rec} {
					seen := map[string]bool{} // Pods.annotation reads the first: a key is there once
					for i := 0; i < len(r.annotations); i += 2 {
						if seen[r.annotations[i]] {
							t.Fatalf("%q: annotation %q twice in its record (%s)", s, r.annotations[i], name)
						}
						seen[r.annotations[i]] = true
					}
					if got := r.pod(); !reflect.DeepEqual(got, want) {
						t.Fatalf("%q: built from its record (%s):\n record: %+v\n read:   %+v", s, name, got, want)
					}
					// As the snapshot keeps it: packed beside another pod, built fresh and by a reader.
					ps := packedTwice(r)
					if got := ps.At(1); !reflect.DeepEqual(got, want) {
						t.Fatalf("%q: built from its packed record (%s):\n record: %+v\n read:   %+v", s, name, got, want)
					}
					if got := ps.Reader()(1); !reflect.DeepEqual(got, want) {
						t.Fatalf("%q: built by a reader from its packed record (%s):\n record: %+v\n read:   %+v", s, name, got, want)
					}
				}
			}
			return
		}
		got, err := decodeKind(js, typeMeta{Kind: sc.kind, APIVersion: sc.apiVersion})
		switch {
		case wantErr == nil && err != nil:
			t.Fatalf("%q: %v decoded by its kind, the reflection decoder reads it", s, err)
		case wantErr == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: decoded differently:\n by its kind: %+v\n reflection:  %+v", s, got, want)
		case wantErr != nil && err == nil:
			// The reflection decoder's first pass reads every object as a pod, and then only its kind: an
			// object that fails both is refused there, decoded by its kind here. Nothing else may differ.
			var tm typeMeta
			if unmarshal(js, &tm) == nil {
				t.Fatalf("%q: decoded by its kind, the reflection decoder refuses it: %v", s, wantErr)
			}
		}
	})
}
