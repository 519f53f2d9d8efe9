package lint

import (
	"testing"
)

const (
	quotaField   = "metadata.annotations[volcano.sh/card.quota]"
	nameField    = "metadata.annotations[volcano.sh/card.name]"
	requestField = "metadata.annotations[volcano.sh/card.request]"
	queueField   = "metadata.annotations[scheduling.volcano.sh/queue-name]"
)

func TestLintCardQuotaUnparsable(t *testing.T) {
	testCheck(t, "card-quota-unparsable", []lintCase{
		{"count as a string is repaired", snap(h200Node(), queue("q", `{"NVIDIA-H200": "2"}`)),
			nil, []want{{Error, "Queue q", quotaField, "is not a number; Volcano's capacity-card plugin reads it as an empty quota and denies every card",
				`kubectl annotate queue q volcano.sh/card.quota='{"NVIDIA-H200":2}' --overwrite`}}},
		{"single quotes are repaired", snap(h200Node(), queue("q", `{'NVIDIA-H200': 2, 'NVIDIA-H200/mig-1g.18gb-mixed': 1}`)),
			nil, []want{{Error, "Queue q", quotaField, "is not a JSON object", `'{"NVIDIA-H200":2,"NVIDIA-H200/mig-1g.18gb-mixed":1}'`}}},
		{"garbage gets an example with a real card", snap(h200Node(), queue("q", "H200=2")),
			nil, []want{{Error, "Queue q", quotaField, "is not a JSON object", `write a JSON object of card name to whole count, one key per card (no A|B), e.g. kubectl annotate queue q volcano.sh/card.quota='{"NVIDIA-H200":2}'`}}},
		{"alternatives in a quota cannot be repaired", snap(h200Node(), queue("q", `{"NVIDIA-H200|NVIDIA-H800": 2}`)),
			nil, []want{{Error, "Queue q", quotaField, "lists alternatives", "one key per card (no A|B)"}}},
		{"a fractional count is not repaired", snap(queue("q", `{"NVIDIA-H200": 1.5}`)),
			nil, []want{{Error, "Queue q", quotaField, "whole number", `e.g. kubectl annotate queue q volcano.sh/card.quota='{"NVIDIA-H200":2}'`}}},
		{"a valid quota", snap(h200Node(), queue("q", `{"NVIDIA-H200":2}`)), nil, nil},
		{"no quota", snap(h200Node(), queue("q", "-")), nil, nil},
	})
}

func TestRepairCardCounts(t *testing.T) {
	for raw, want := range map[string]string{
		`{"a": "2"}`:        `{"a":2}`,
		`{a: 2, b: "3"}`:    `{"a":2,"b":3}`,
		`{"a": 2.0}`:        `{"a":2}`,
		`{"a": -1}`:         "",
		`{"a|b": 1}`:        "",
		`{"a": "x"}`:        "",
		`[1,2]`:             "",
		`{}`:                "",
		`{"a": [1]}`:        "",
		`{"a": 1e20}`:       "",
		"{\"a\": 1} junk ]": "",
	} {
		got, ok := repairCardCounts(raw)
		if got != want || ok != (want != "") {
			t.Errorf("repairCardCounts(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
}

func TestLintCardQuotaEmpty(t *testing.T) {
	testCheck(t, "card-quota-empty", []lintCase{
		{"empty object", snap(queue("q", "{}")), nil, []want{{Warning, "Queue q", quotaField, `the card quota is empty ("{}"): every card is denied`, "list the cards"}}},
		{"empty string", snap(queue("q", "")), nil, []want{{Warning, "Queue q", quotaField, "every card is denied", "remove the annotation"}}},
		{"a card", snap(queue("q", `{"NVIDIA-H200":1}`)), nil, nil},
		{"unparsable is another check", snap(queue("q", "x")), nil, nil},
		{"no annotation", snap(queue("q", "-")), nil, nil},
	})
}

func TestLintCardNameUnparsable(t *testing.T) {
	testCheck(t, "card-name-unparsable", []lintCase{
		{"trailing bar", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-H200|"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "has an empty alternative at position 1", "kubectl annotate pod -n ns p volcano.sh/card.name='NVIDIA-H200' --overwrite"}}},
		{"a card twice", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-H200|NVIDIA-H200"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "lists NVIDIA-H200 twice", "volcano.sh/card.name='NVIDIA-H200'"}}},
		{"empty", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: " "}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "is empty", "name one card, or alternatives separated by |, e.g. NVIDIA-H200"}}},
		{"finished pods are left alone", snap(func() any {
			p := pod("ns", "p", map[string]string{cAnn: "|"}, gpu1, "")
			p.Status.Phase = "Succeeded"
			return p
		}()), nil, nil},
		{"valid", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-H200|NVIDIA-H800"}, gpu1, "")), nil, nil},
	})
}

func TestLintCardRequestUnparsable(t *testing.T) {
	testCheck(t, "card-request-unparsable", []lintCase{
		{"single quotes are repaired", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", `{'NVIDIA-H200': 2}`)),
			nil, []want{{Error, "PodGroup ns/job", requestField, "is not a JSON object", `kubectl annotate podgroup -n ns job volcano.sh/card.request='{"NVIDIA-H200":2}' --overwrite`}}},
		{"an empty alternative", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", `{"NVIDIA-H200|": 2}`)),
			nil, []want{{Error, "PodGroup ns/job", requestField, "empty alternative", `e.g. '{"NVIDIA-H200":4}'`}}},
		{"valid with alternatives", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", `{"NVIDIA-H200|NVIDIA-H800": 2}`)), nil, nil},
	})
}

func TestLintUnknownCards(t *testing.T) {
	rtx := node("rtx-01", map[string]string{"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090", "nvidia.com/gpu.count": "2"},
		map[string]string{"nvidia.com/gpu": "2"}, 0)
	testCheck(t, "card-unknown", []lintCase{
		{"a typo in a quota suggests the card", snap(h200Node(), queue("q", `{"NVDIA-H200":1,"NVIDIA-H200":1}`)),
			nil, []want{{Warning, "Queue q", quotaField, "no node has card NVDIA-H200 (did you mean NVIDIA-H200?): this quota entry grants nothing",
				"write NVIDIA-H200 instead of NVDIA-H200 in volcano.sh/card.quota"}}},
		{"another model is no typo", snap(h200Node(), queue("q", `{"NVIDIA-H20":1}`)),
			nil, []want{{Warning, "Queue q", quotaField, "no node has card NVIDIA-H20; the cluster has NVIDIA-H200, NVIDIA-H200/mig-1g.18gb-mixed: this quota entry grants nothing",
				"use a card name of the cluster"}}},
		{"case differs", snap(h200Node(), queue("q", `{"nvidia-h200":1}`)),
			nil, []want{{Warning, "Queue q", quotaField, "did you mean NVIDIA-H200?", "write NVIDIA-H200 instead"}}},
		{"a name far from every card lists them", snap(h200Node(), queue("q", `{"Ascend-910B":1}`)),
			nil, []want{{Warning, "Queue q", quotaField, "the cluster has NVIDIA-H200, NVIDIA-H200/mig-1g.18gb-mixed", "use a card name of the cluster"}}},
		{"a pending pod with no existing alternative is an error", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-H2OO"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "did you mean NVIDIA-H200?); no alternative exists, so Volcano never places the pod", "write NVIDIA-H200 instead of NVIDIA-H2OO"}}},
		{"a running pod gets a warning", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "nvidia-h200"}, gpu1, "h200-01")),
			nil, []want{{Warning, "Pod ns/p", nameField, "a new copy of it would never be placed", "NVIDIA-H200"}}},
		{"one missing alternative of two", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-H200|NVIDIA-H800"}, gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "no node has card NVIDIA-H800; the cluster has NVIDIA-H200, NVIDIA-H200/mig-1g.18gb-mixed; the pod can still take another alternative", "use a card name of the cluster"}}},
		{"a job whose every alternative is missing", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", `{"NVIDIA-H800|NVIDIA-A800":2}`)),
			nil, []want{
				{Error, "PodGroup ns/job", requestField, "no node has card NVIDIA-A800", ""},
				{Error, "PodGroup ns/job", requestField, "no node has card NVIDIA-H800; the cluster has NVIDIA-H200, NVIDIA-H200/mig-1g.18gb-mixed; the job's request can never be met", "use a card name"},
			}},
		{"a node labels the card without .memory", snap(h200Node(), rtx, pod("ns", "p", map[string]string{cAnn: "NVIDIA-GeForce-RTX-4090"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "rtx-01 labels it, but without the .count and .memory labels the card quota sees no card",
				"complete the card labels of rtx-01"}}},
		{"no card model at all", snap(node("n", nil, map[string]string{"nvidia.com/gpu": "8"}, 0), queue("q", `{"NVIDIA-H200":1}`)),
			nil, []want{{Warning, "Queue q", quotaField, "no node has any card model", "label the GPU nodes with nvidia.com/gpu.product, nvidia.com/gpu.count and nvidia.com/gpu.memory"}}},
		{"known cards", snap(h200Node(), queue("q", `{"NVIDIA-H200":1,"NVIDIA-H200/mig-1g.18gb-mixed":3}`),
			pod("ns", "p", map[string]string{cAnn: mig}, map[string]string{"nvidia.com/mig-1g.18gb": "1"}, "")), nil, nil},
	})
}

func TestLintMixedAlternatives(t *testing.T) {
	testCheck(t, "card-alternatives-mixed", []lintCase{
		{"a whole card or a MIG slice", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: h200 + "|" + mig}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "NVIDIA-H200 is nvidia.com/gpu, NVIDIA-H200/mig-1g.18gb-mixed is nvidia.com/mig-1g.18gb", "only alternatives of one resource"}}},
		{"two MIG profiles of cards no node has", snap(pod("ns", "p", map[string]string{cAnn: "NVIDIA-H20/mig-1g.24gb-mixed|NVIDIA-H20/mig-1g.37gb-mixed"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", nameField, "is nvidia.com/mig-1g.24gb, NVIDIA-H20/mig-1g.37gb-mixed is nvidia.com/mig-1g.37gb", ""}}},
		{"MPS and a whole card in a job", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", `{"NVIDIA-H800/mps-80g*1/2|NVIDIA-H200":2}`)),
			nil, []want{{Error, "PodGroup ns/job", requestField, `"NVIDIA-H800/mps-80g*1/2|NVIDIA-H200": alternatives map to different resources (NVIDIA-H800/mps-80g*1/2 is nvidia.com/gpu.shared`, ""}}},
		{"whole cards of two models", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: "NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D|NVIDIA-H200"}, gpu1, "")), nil, nil},
		{"one card", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: mig}, gpu1, "")), nil, nil},
	})
}

func TestLintCardAmountZero(t *testing.T) {
	testCheck(t, "card-amount-zero", []lintCase{
		{"a MIG card on a pod asking for GPUs", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: mig}, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1000"}, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "maps to nvidia.com/mig-1g.18gb, but the pod asks for no nvidia.com/mig-1g.18gb: the card quota counts it as 0 cards (it asks for nvidia.com/gpu, nvidia.com/gpumem)",
				"ask for nvidia.com/mig-1g.18gb in the container's limits"}}},
		{"a whole card on a pod asking for nothing", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: h200}, map[string]string{"cpu": "1"}, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "the pod asks for no nvidia.com/gpu: the card quota counts it as 0 cards", ""}}},
		{"an init container's request counts", snap(h200Node(), func() any {
			p := pod("ns", "p", map[string]string{cAnn: mig}, nil, "")
			p.Spec.InitContainers = p.Spec.Containers
			p.Spec.InitContainers[0].Resources.Limits = resources(map[string]string{"nvidia.com/mig-1g.18gb": "1"})
			return p
		}()), nil, nil},
		{"a request without a limit counts", snap(h200Node(), func() any {
			p := pod("ns", "p", map[string]string{cAnn: h200}, nil, "")
			p.Spec.Containers[0].Resources.Requests = resources(gpu1)
			return p
		}()), nil, nil},
		{"mixed alternatives are another check", snap(h200Node(), pod("ns", "p", map[string]string{cAnn: h200 + "|" + mig}, nil, "")), nil, nil},
	})
}

func TestLintSlotsCounted(t *testing.T) {
	testCheck(t, "card-slots-counted", []lintCase{
		{"a HAMi node with split count 10", snap(h200Node(), queue("q", "{}")),
			nil, []want{{Warning, "Node h200-01", "status.allocatable[nvidia.com/gpu]",
				"allocatable nvidia.com/gpu is 80 vGPU slots (8 GPUs x 10 slots): Volcano's capacity-card plugin would count 80 NVIDIA-H200 cards here, the node has 8 physical GPUs",
				"kubectl hami serve-extender --card-quota=enforce, which counts the 8 physical cards"}}},
		{"without Volcano it does not matter", snap(h200Node()), nil, nil},
		{"a node Volcano counts right", snap(queue("q", "{}"), node("n", map[string]string{"nvidia.com/gpu.product": h200, "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "1"},
			map[string]string{"nvidia.com/gpu": "8"}, 8)), nil, nil},
	})
}

func TestLintCardLabels(t *testing.T) {
	labels := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	gpu8 := map[string]string{"nvidia.com/gpu": "80"}
	testCheck(t, "card-labels-incomplete", []lintCase{
		{"no .count and .memory; HAMi's registration gives the values", snap(queue("q", "{}"), node("n", labels("nvidia.com/gpu.product", h200), gpu8, 8)),
			nil, []want{{Warning, "Node n", "metadata.labels[nvidia.com/gpu.count, nvidia.com/gpu.memory]",
				"nvidia.com/gpu.product=NVIDIA-H200 but no nvidia.com/gpu.count or nvidia.com/gpu.memory label: Volcano's capacity-card plugin sees no NVIDIA-H200 card",
				"kubectl label node n nvidia.com/gpu.count=8 nvidia.com/gpu.memory=143771"}}},
		{"no .memory, not registered", snap(queue("q", "{}"), node("n", labels("nvidia.com/gpu.product", h200, "nvidia.com/gpu.count", "8"), gpu8, 0)),
			nil, []want{{Warning, "Node n", "metadata.labels[nvidia.com/gpu.memory]", "no nvidia.com/gpu.memory label", "nvidia.com/gpu.memory=<MiB>"}}},
		{"an empty product", snap(queue("q", "{}"), node("n", labels("nvidia.com/gpu.product", "", "nvidia.com/gpu.count", "8", "nvidia.com/gpu.memory", "1"), gpu8, 0)),
			nil, []want{{Warning, "Node n", "metadata.labels[nvidia.com/gpu.product]", "the card model label is empty", "kubectl label node n nvidia.com/gpu.product="}}},
		{"bad numbers", snap(queue("q", "{}"), node("n", labels("nvidia.com/gpu.product", h200, "nvidia.com/gpu.count", "eight", "nvidia.com/gpu.memory", "80GB"), gpu8, 0)),
			nil, []want{
				{Warning, "Node n", "metadata.labels[nvidia.com/gpu.memory]", `"80GB" is not a whole number of MiB`, "81920"},
				{Info, "Node n", "metadata.labels[nvidia.com/gpu.count]", `"eight" is not a whole number`, "number of GPUs"},
			}},
		{"MPS without replicas", snap(queue("q", "{}"), node("n", labels("nvidia.com/gpu.product", "NVIDIA-H800", "nvidia.com/gpu.count", "1", "nvidia.com/gpu.memory", "81920"),
			map[string]string{"nvidia.com/gpu.shared": "2"}, 0)),
			nil, []want{{Warning, "Node n", "metadata.labels[nvidia.com/gpu.replicas]", "allocatable nvidia.com/gpu.shared is 2 but nvidia.com/gpu.replicas is missing", "nvidia.com/gpu.replicas=<MPS replicas per GPU>"}}},
		{"MIG product labels are not card models", snap(queue("q", "{}"), node("n", labels("nvidia.com/mig-1g.10gb.product", "x", "nvidia.com/gpu.product", h200,
			"nvidia.com/gpu.count", "8", "nvidia.com/gpu.memory", "1"), gpu8, 0)), nil, nil},
		{"without Volcano it does not matter", snap(node("n", labels("nvidia.com/gpu.product", h200), gpu8, 0)), nil, nil},
		{"complete", snap(queue("q", "{}"), h200Node()), nil, nil},
	})
}

func TestLintQuotaAbovePhysical(t *testing.T) {
	testCheck(t, "card-quota-above-physical", []lintCase{
		{"one queue above the cluster", snap(h200Node(), queue("q", `{"NVIDIA-H200":10}`)),
			nil, []want{{Warning, "Queue q", quotaField, "quota 10 NVIDIA-H200, but the cluster has 8 (h200-01): the queue can never use its quota in full", "lower NVIDIA-H200 to 8"}}},
		{"MIG slices count allocatable", snap(h200Node(), queue("q", `{"NVIDIA-H200/mig-1g.18gb-mixed":4}`)),
			nil, []want{{Warning, "Queue q", quotaField, "quota 4 NVIDIA-H200/mig-1g.18gb-mixed, but the cluster has 3", ""}}},
		{"queues together above the cluster", snap(h200Node(), queue("a", `{"NVIDIA-H200":6}`), queue("b", `{"NVIDIA-H200":4}`), queue("c", `{"NVIDIA-H200":0}`)),
			nil, []want{{Info, "Cluster NVIDIA-H200", "sum of volcano.sh/card.quota over queues", "queues are promised 10 NVIDIA-H200 (a 6, b 4), the cluster has 8", "overcommitted"}}},
		{"within the cluster", snap(h200Node(), queue("a", `{"NVIDIA-H200":4}`), queue("b", `{"NVIDIA-H200":4}`)), nil, nil},
		{"physical GPUs, not slots", snap(h200Node(), queue("a", `{"NVIDIA-H200":9}`)),
			nil, []want{{Warning, "Queue a", quotaField, "the cluster has 8", ""}}},
	})
}

func TestLintCardNotInQueueQuota(t *testing.T) {
	inQ := func(q, card string) map[string]string { return map[string]string{qAnn: q, cAnn: card} }
	testCheck(t, "card-not-in-queue-quota", []lintCase{
		{"a pending pod asks for an unlisted card", snap(h200Node(), queue("q", `{"NVIDIA-H200/mig-1g.18gb-mixed":1}`), pod("ns", "p", inQ("q", h200), gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "the pod asks for NVIDIA-H200 in queue q, which has no quota for it: Volcano's capacity-card plugin denies it",
				"add NVIDIA-H200 to queue q's volcano.sh/card.quota"}}},
		{"a quota of 0 is none", snap(h200Node(), queue("q", `{"NVIDIA-H200":0}`), pod("ns", "p", inQ("q", h200), gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "which has no quota for it", ""}}},
		{"a queue without a card quota", snap(h200Node(), queue("q", "-"), pod("ns", "p", inQ("q", h200), gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "which has no volcano.sh/card.quota at all", ""}}},
		{"a running pod is info", snap(h200Node(), queue("q", "{}"), pod("ns", "p", inQ("q", h200), gpu1, "h200-01")),
			nil, []want{{Info, "Pod ns/p", nameField, "which has no quota for it", ""}}},
		{"the queue through the PodGroup", snap(h200Node(), queue("q", "{}"), podGroup("ns", "job", "q", "-"),
			pod("ns", "p", map[string]string{gAnn: "job", cAnn: h200}, gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", nameField, "in queue q", ""}}},
		{"a job asks for an unlisted card", snap(h200Node(), queue("q", `{"NVIDIA-H800":1}`), podGroup("ns", "job", "q", `{"NVIDIA-H200":2}`)),
			nil, []want{{Warning, "PodGroup ns/job", requestField, "the job asks for 2 NVIDIA-H200 in queue q, which has no quota for it: the job is never enqueued", "add NVIDIA-H200"}}},
		{"one alternative listed is enough", snap(h200Node(), queue("q", `{"NVIDIA-H200/mig-1g.18gb-mixed":1}`), pod("ns", "p", inQ("q", "NVIDIA-H200/mig-1g.18gb-mixed|NVIDIA-H200/mig-2g.35gb-mixed"), nil, "")), nil, nil},
		{"unknown cards are another check", snap(h200Node(), queue("q", "{}"), pod("ns", "p", inQ("q", "NVIDIA-H2O"), gpu1, "")), nil, nil},
		{"an unreadable quota is another check", snap(h200Node(), queue("q", "x"), pod("ns", "p", inQ("q", h200), gpu1, "")), nil, nil},
	})
}

func TestLintQueueMissing(t *testing.T) {
	testCheck(t, "queue-missing", []lintCase{
		{"a pending pod in a missing queue", snap(queue("team-a", "{}"), pod("ns", "p", map[string]string{qAnn: "team-c"}, gpu1, "")),
			nil, []want{{Error, "Pod ns/p", queueField, "queue team-c does not exist: Volcano does not schedule the pod", "write team-a (an existing queue) or create queue team-c"}}},
		{"a running pod", snap(queue("research", "{}"), pod("ns", "p", map[string]string{qAnn: "team-c"}, gpu1, "n")),
			nil, []want{{Warning, "Pod ns/p", queueField, "queue team-c does not exist", "use an existing queue (research) or create queue team-c"}}},
		{"a PodGroup", snap(queue("serving", "{}"), podGroup("ns", "job", "servng", "-")),
			nil, []want{{Error, "PodGroup ns/job", "spec.queue", "queue servng does not exist: the job is never enqueued", "write serving"}}},
		{"a PodGroup without a queue goes to default", snap(queue("serving", "{}"), podGroup("ns", "job", "", "-")),
			nil, []want{{Error, "PodGroup ns/job", "spec.queue", "queue default does not exist", ""}}},
		{"Volcano absent", snap(pod("ns", "p", map[string]string{qAnn: "team-c"}, gpu1, "")), nil, nil},
		{"existing", snap(queue("team-a", "{}"), pod("ns", "p", map[string]string{qAnn: "team-a"}, gpu1, ""), podGroup("ns", "job", "team-a", "-")), nil, nil},
	})
}

func TestLintPodGroupMissing(t *testing.T) {
	testCheck(t, "podgroup-missing", []lintCase{
		{"a card pod in a missing PodGroup", snap(h200Node(), queue("q", "{}"), podGroup("ns", "other", "q", "-"), pod("ns", "p", map[string]string{gAnn: "ghost", cAnn: h200}, gpu1, "")),
			nil, []want{{Warning, "Pod ns/p", "metadata.annotations[scheduling.k8s.io/group-name]", "PodGroup ns/ghost does not exist", "create PodGroup ghost in namespace ns"}}},
		{"the queue annotation is enough", snap(queue("q", "{}"), podGroup("ns", "other", "q", "-"), pod("ns", "p", map[string]string{gAnn: "ghost", qAnn: "q", cAnn: h200}, gpu1, "")), nil, nil},
		{"PodGroups were not read", snap(queue("q", "{}"), pod("ns", "p", map[string]string{gAnn: "ghost", cAnn: h200}, gpu1, "")), nil, nil},
		{"present", snap(queue("q", "{}"), podGroup("ns", "job", "q", "-"), pod("ns", "p", map[string]string{gAnn: "job", cAnn: h200}, gpu1, "")), nil, nil},
	})
}
