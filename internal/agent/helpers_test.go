package agent

import "github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"

var (
	testLogger = agenttest.Logger
	createNode = agenttest.CreateNode
	getNode    = agenttest.GetNode
)
