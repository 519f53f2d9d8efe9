package snapshot

import corev1 "k8s.io/api/core/v1"

// trimPod drops from a pod read from a file what no command reads, before the pod is kept: a real pod's
// volumes, environment, probes and container statuses are most of its decoded size, and a snapshot holds every
// pod of the cluster for the life of the command. What stays is everything the engine (HAMi's annotations,
// requests and limits, node, scheduler, phase), kube-scheduler's checks in kubefit (selectors, affinity,
// tolerations, spread constraints, ports, overhead, init containers and their restart policy, scheduling
// gates, OS, host network), preemption (priority, preemption policy, start time, labels, nominated node) and the
// surfaces (metadata whole, images, conditions, security contexts for HAMi's privileged rule) read;
// TestTrimmedPodsReadTheSame holds every consumer to it. The trimmed pod is then kept as a compact record
// (pods.go).
//
// A pod read live is kept as the API server sent it (less its managedFields): `kubectl hami snapshot` writes
// it whole, and a later version may read more of a saved file. `kubectl hami snapshot --snapshot FILE` writes
// the trimmed pods of FILE.
func trimPod(p *corev1.Pod) {
	if keepWholePods {
		return
	}
	sp := &p.Spec
	sp.Volumes = nil
	sp.EphemeralContainers = nil // their requests count nowhere (kube-scheduler's PodRequests skips them)
	sp.ImagePullSecrets = nil
	sp.DNSConfig, sp.DNSPolicy = nil, ""
	sp.HostAliases = nil
	sp.ReadinessGates = nil
	sp.TerminationGracePeriodSeconds, sp.ActiveDeadlineSeconds = nil, nil
	sp.AutomountServiceAccountToken, sp.EnableServiceLinks, sp.SetHostnameAsFQDN, sp.ShareProcessNamespace = nil, nil, nil, nil
	sp.DeprecatedServiceAccount = ""
	sp.Hostname, sp.Subdomain = "", ""
	for i := range sp.InitContainers {
		trimContainer(&sp.InitContainers[i])
	}
	for i := range sp.Containers {
		trimContainer(&sp.Containers[i])
	}
	st := &p.Status
	st.ContainerStatuses, st.InitContainerStatuses, st.EphemeralContainerStatuses = nil, nil, nil
	st.HostIP, st.HostIPs = "", nil
	st.PodIPs = nil // status.podIP stays: the agent's pod is found by it
	st.QOSClass = ""
	st.ResourceClaimStatuses = nil
	st.Resize = ""
}

// trimContainer keeps a container's name, image, resources, ports, restart policy (a native sidecar's requests
// count as kube-scheduler counts them) and security context.
func trimContainer(c *corev1.Container) {
	c.Command, c.Args, c.WorkingDir = nil, nil, ""
	c.Env, c.EnvFrom = nil, nil
	c.VolumeMounts, c.VolumeDevices = nil, nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	c.Lifecycle = nil
	c.TerminationMessagePath, c.TerminationMessagePolicy = "", ""
	c.ImagePullPolicy = ""
	c.ResizePolicy = nil
	c.Stdin, c.StdinOnce, c.TTY = false, false, false
}

// keepWholePods turns trimPod off, for the test that holds what the commands print to be the same either way.
var keepWholePods bool
