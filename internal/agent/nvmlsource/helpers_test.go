//go:build linux && cgo

package nvmlsource

import "github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"

var (
	testLogger       = agenttest.Logger
	createNode       = agenttest.CreateNode
	createPod        = agenttest.CreatePod
	getNode          = agenttest.GetNode
	patchAnnotations = agenttest.PatchAnnotations
	decodeNode       = agenttest.DecodeNode
	decodeNodeAs     = agenttest.DecodeNodeAs
	registeredGPUs   = agenttest.RegisteredGPUs
	waitFor          = agenttest.WaitFor
	parseMetrics     = agenttest.ParseMetrics
	metricValue      = agenttest.MetricValue
	jsonString       = agenttest.JSONString
)
