package snapshot_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// What a read snapshot keeps: besides the time of Parse, kept-B/pod is the heap still in use after a collection,
// with the snapshot alive, per pod; a large snapshot's memory is that times its pods (docs/benchmarks.md). The
// rich file's pods are shaped as the API server writes a Deployment's pod (hack/genbig -rich): labels, an owner,
// volumes, environment, probes, conditions, container statuses. Only the package's exported API and
// bench_read_test.go's genbigShape are used, so that `make bench-compare` builds this file against an older base.

func benchKept(b *testing.B, data []byte, pods int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var kept uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		before := heapInUse()
		b.StartTimer()
		s, err := snapshot.Parse(data, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.Pods.Len() != pods {
			b.Fatalf("%d pods read, want %d", s.Pods.Len(), pods)
		}
		kept = heapInUse() - before
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	b.ReportMetric(float64(kept)/float64(pods), "kept-B/pod")
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func BenchmarkReadKeptJSON500Nodes5kPods(b *testing.B) {
	benchKept(b, readFile(b, 500, 5000, "json"), 5000)
}

func BenchmarkReadKeptRichJSON200Nodes2kPods(b *testing.B) {
	s := genbigShape(200, 2000)
	for i, p := range s.Pods.Slice() {
		richPod(p, i)
	}
	var buf bytes.Buffer
	if err := s.WriteList(&buf, "json"); err != nil {
		b.Fatal(err)
	}
	benchKept(b, buf.Bytes(), 2000)
}

// richPod gives a genbig pod what the API server writes on a Deployment's pod.
func richPod(p *corev1.Pod, i int) {
	p.UID = types.UID(fmt.Sprintf("5f0c3e2a-0000-4b1e-9a7d-%012x", i))
	p.ResourceVersion, p.GenerateName = fmt.Sprint(100000+i), "train-7d9c6b5f4-"
	p.CreationTimestamp = metav1.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	p.Labels = map[string]string{"app": "train", "pod-template-hash": "7d9c6b5f4"}
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "train-7d9c6b5f4",
		UID: "0b6c1f9e-2d4a-4c8e-8f1a-3e5d7c9b1a20", Controller: &yes, BlockOwnerDeletion: &yes}}
	c := &p.Spec.Containers[0]
	c.Command, c.Args = []string{"python", "-m", "train"}, []string{"--epochs=90", "--batch-size=256", "--data=/data/imagenet"}
	c.Env = []corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "WARN"}, {Name: "OMP_NUM_THREADS", Value: "8"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
	c.Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true},
		{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080),
		Scheme: corev1.URISchemeHTTP}}, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	c.LivenessProbe, c.ReadinessProbe = probe, probe
	c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.PullIfNotPresent, "/dev/termination-log", corev1.TerminationMessageReadFile
	mode, expiry := int32(420), int64(3607)
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "imagenet"}}},
		{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: &mode, Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &expiry, Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}}}}}}}
	grace, prio, policy := int64(30), int32(0), corev1.PreemptLowerPriority
	p.Spec.DNSPolicy, p.Spec.EnableServiceLinks, p.Spec.PreemptionPolicy, p.Spec.Priority = corev1.DNSClusterFirst, &yes, &policy, &prio
	p.Spec.RestartPolicy, p.Spec.SecurityContext, p.Spec.ServiceAccountName = corev1.RestartPolicyAlways, &corev1.PodSecurityContext{}, "default"
	p.Spec.DeprecatedServiceAccount, p.Spec.TerminationGracePeriodSeconds = "default", &grace
	wait := int64(300)
	p.Spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &wait},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &wait}}
	at := metav1.Date(2026, 11, 20, 8, 0, 5, 0, time.UTC)
	st := &p.Status
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at})
	}
	ip := fmt.Sprintf("10.%d.%d.%d", i/62500%200, i/250%250, i%250)
	st.HostIP, st.HostIPs, st.PodIP, st.PodIPs = "192.168.10.7", []corev1.HostIP{{IP: "192.168.10.7"}}, ip, []corev1.PodIP{{IP: ip}}
	st.QOSClass, st.StartTime = corev1.PodQOSBurstable, &at
	st.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "registry.example.com/ml/train:1",
		ImageID: fmt.Sprintf("registry.example.com/ml/train@sha256:%064x", i), ContainerID: fmt.Sprintf("containerd://%064x", i*31),
		Ready: true, Started: &yes, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
		AllocatedResources: corev1.ResourceList{"cpu": resource.MustParse("1")}}}
}
