package cambricon_test

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/device/cambricon"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// Cambricon's rules (pkg/device/cambricon/device.go): MLUs from the node's capacity (vcore / 100 devices, an
// equal share of vmemory x 256 MiB each), typed by the Model label, 100 % cores when a container names none,
// the namespace quota checked inside Fit (its QuotaRow: fitQuota), and the DSMLU profile written at bind.
func TestCambriconRules(t *testing.T) {
	node := ft.Node("n1", nil, map[string]string{"cambricon.com/mlu.smlu.vcore": "200", "cambricon.com/mlu.smlu.vmemory": "128"})
	node.Labels = map[string]string{"Model": "MLU370-X8"}
	ask := func(mem, cores string) map[string]string {
		m := map[string]string{"cambricon.com/mlu": "1", "cambricon.com/mlu.smlu.vmemory": mem}
		if cores != "" {
			m["cambricon.com/mlu.smlu.vcore"] = cores
		}
		return m
	}
	ft.Run(t, ft.Kinds(t, cambricon.Family{}), []ft.Case{
		{Name: "memory in 256 MiB units, the profile at bind", Node: node, Pod: ft.Pod("p", nil, ask("4", "30")),
			Want: [][]string{{"n1-cambricon-mlu-1"}}, Annotations: map[string]string{"CAMBRICON_DSMLU_PROFILE": "1_30_4", "CAMBRICON_DSMLU_ASSIGNED": "false"}},
		{Name: "more memory than an MLU has", Node: node, Pod: ft.Pod("p", nil, ask("65", "30")),
			Want: nil, Reason: "2/2 CardInsufficientMemory"},
		{Name: "the quota row: within the namespace's vmemory", Node: node, Quota: map[string]string{"limits.cambricon.com/mlu.smlu.vmemory": "8"},
			Pod: ft.Pod("p", nil, ask("4", "30")), Want: [][]string{{"n1-cambricon-mlu-1"}}},
		{Name: "the quota row: above the namespace's vmemory", Node: node, Quota: map[string]string{"limits.cambricon.com/mlu.smlu.vmemory": "8"},
			Pod: ft.Pod("p", nil, ask("10", "30")), Want: nil, Reason: "2/2 ResourceQuotaNotFit"},
	})
}
