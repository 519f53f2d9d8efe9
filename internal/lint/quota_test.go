package lint

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

func TestLintQuotaKeys(t *testing.T) {
	renamed := engine.DefaultConfig()
	renamed.ResourceMemoryName = "example.com/vmem"
	renamed.ResourceCoreName = "example.com/vcores"
	renamed.ResourceCountName = "example.com/vgpu"
	renamed.ResourceMemoryPercentageName = "example.com/vmem-percentage"
	renamed.ResourcePriorityName = "example.com/vpriority"
	testCheck(t, "quota-key-ignored", []lintCase{
		{"requests. memory alone", snap(rq("ns", "q", map[string]string{"requests.nvidia.com/gpumem": "40000"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[requests.nvidia.com/gpumem]", "HAMi ignores requests.nvidia.com/gpumem: it enforces only limits.nvidia.com/gpumem",
				`rename the key to limits.nvidia.com/gpumem: kubectl -n ns patch resourcequota q --type=json -p '[{"op":"move","from":"/spec/hard/requests.nvidia.com~1gpumem","path":"/spec/hard/limits.nvidia.com~1gpumem"}]'`}}},
		{"requests. cores beside limits. in another ResourceQuota", snap(rq("ns", "a", map[string]string{"limits.nvidia.com/gpucores": "200"}), rq("ns", "b", map[string]string{"requests.nvidia.com/gpucores": "200"})),
			nil, []want{{Info, "ResourceQuota ns/b", "spec.hard[requests.nvidia.com/gpucores]", "HAMi ignores", "HAMi enforces limits.nvidia.com/gpucores already"}}},
		// Rated by what the key does: Kubernetes refuses to create pods past it, whatever HAMi enforces.
		{"requests. memory the pods already exceed", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "120k", "requests.nvidia.com/gpumem": "120k"}),
			pod("ns", "small", nil, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "59000"}, "n1"),
			pod("ns", "large", nil, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "70k"}, ""),
			pod("ns-other", "elsewhere", nil, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "90000"}, "")),
			nil, []want{{Error, "ResourceQuota ns/q", "spec.hard[requests.nvidia.com/gpumem]",
				"the namespace's pods ask for 129000 in all (large 70000, small 59000), above the hard 120000, so Kubernetes refuses to create any further pod asking for nvidia.com/gpumem here",
				`remove requests.nvidia.com/gpumem (kubectl -n ns patch resourcequota q --type=json -p '[{"op":"remove","path":"/spec/hard/requests.nvidia.com~1gpumem"}]'), or raise it above 129000`}}},
		{"requests. memory alone, exceeded", snap(rq("ns", "q", map[string]string{"requests.nvidia.com/gpumem": "1000"}),
			pod("ns", "p", nil, map[string]string{"nvidia.com/gpu": "2", "nvidia.com/gpumem": "2000"}, "")),
			nil, []want{{Error, "ResourceQuota ns/q", "spec.hard[requests.nvidia.com/gpumem]", "ask for 2000 in all (p 2000), above the hard 1000", "rename the key to limits.nvidia.com/gpumem"}}},
		{"requests. memory below HAMi's limit", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "120000", "requests.nvidia.com/gpumem": "60000"}),
			pod("ns", "p", nil, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "10000"}, "n1")),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[requests.nvidia.com/gpumem]", "its hard 60000 is below HAMi's limits.nvidia.com/gpumem of 120000, so Kubernetes refuses to create pods that HAMi would place", "or raise it to 120000"}}},
		{"misspelled memory", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumemory": "40000", "limits.nvidia.com/gpu-mem": "1"})),
			nil, []want{
				{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpu-mem]", "nvidia.com/gpu-mem is not a HAMi resource (did you mean nvidia.com/gpumem?): HAMi ignores the key, so namespace ns has no GPU memory quota", "rename the key to limits.nvidia.com/gpumem"},
				{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpumemory]", "did you mean nvidia.com/gpumem?", `"path":"/spec/hard/limits.nvidia.com~1gpumem"`},
			}},
		{"misspelled cores beside the right key", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpu-cores": "200", "limits.nvidia.com/gpucores": "100"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpu-cores]", "did you mean nvidia.com/gpucores?): HAMi ignores the key",
				`limits.nvidia.com/gpucores is set already (to 100): keep the value you mean there and remove limits.nvidia.com/gpu-cores: kubectl -n ns patch resourcequota q --type=json -p '[{"op":"remove","path":"/spec/hard/limits.nvidia.com~1gpu-cores"}]'`}}},
		{"a bare key", snap(rq("ns", "q", map[string]string{"nvidia.com/gpumem": "40000"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[nvidia.com/gpumem]", "HAMi ignores nvidia.com/gpumem: it enforces only limits.nvidia.com/gpumem", "rename the key to limits.nvidia.com/gpumem"}}},
		{"percentage", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem-percentage": "50"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpumem-percentage]", "HAMi has no quota on nvidia.com/gpumem-percentage", "limits.nvidia.com/gpumem (MiB)"}}},
		{"an unrelated name of the domain", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/foo": "1"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/foo]", "nvidia.com/foo is not a HAMi resource: HAMi ignores the key", "use limits.nvidia.com/gpumem (MiB) or limits.nvidia.com/gpucores"}}},
		{"configured names are the right ones", snap(rq("ns", "q", map[string]string{"limits.example.com/vmem": "1", "limits.example.com/vmemory": "1", "limits.nvidia.com/gpumem": "1"})),
			&renamed, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.example.com/vmemory]", "did you mean example.com/vmem?", "limits.example.com/vmem is set already"}}},
		{"keys Kubernetes counts itself and other domains", snap(rq("ns", "q", map[string]string{"requests.nvidia.com/gpu": "4", "limits.nvidia.com/gpumem": "1", "limits.nvidia.com/gpucores": "1",
			"requests.nvidia.com/mig-1g.10gb": "2", "requests.nvidia.com/gpu.shared": "2", "requests.cpu": "4", "count/pods": "10", "requests.amd.com/gpu": "1"})), nil, nil},
	})
}

func TestLintQuotaZero(t *testing.T) {
	testCheck(t, "quota-zero", []lintCase{
		{"zero cores", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpucores": "0"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpucores]", "HAMi v2.10 denies every GPU pod of the namespace, HAMi before v2.10 read 0 as unlimited", "a positive percentage"}}},
		{"zero memory", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "0"})),
			nil, []want{{Warning, "ResourceQuota ns/q", "spec.hard[limits.nvidia.com/gpumem]", "a quota of 0", "a positive MiB amount"}}},
		{"positive", snap(rq("ns", "q", map[string]string{"limits.nvidia.com/gpumem": "1", "requests.nvidia.com/gpu": "0"})), nil, nil},
	})
}

func TestSuggestResource(t *testing.T) {
	for res, want := range map[string]string{
		"nvidia.com/gpumemory":   "nvidia.com/gpumem",
		"nvidia.com/gpu-mem":     "nvidia.com/gpumem",
		"nvidia.com/GPUMem":      "nvidia.com/gpumem",
		"nvidia.com/gpucore":     "nvidia.com/gpucores",
		"nvidia.com/sm-cores":    "nvidia.com/gpucores",
		"nvidia.com/memory-mib":  "nvidia.com/gpumem",
		"nvidia.com/foo":         "",
		"nvidia.com/percentmem":  "",
		"nvidia.com/utilization": "",
	} {
		if got := suggestResource(res, "nvidia.com/gpumem", "nvidia.com/gpucores"); got != want {
			t.Errorf("suggestResource(%q) = %q, want %q", res, got, want)
		}
	}
}
