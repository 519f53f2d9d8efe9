package query

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// NoDevicesNotice is one sentence for a cluster where HAMi has nothing to schedule: no nodes at all, or no node
// that registers devices HAMi can read (HAMi's device plugin or `kubectl hami agent` writes the registration).
// Every surface puts it first, so that an empty table or "No problems found" is not read as a healthy cluster.
// It is "" when a node registers devices.
func NoDevicesNotice(c *engine.Cluster) string {
	if c == nil {
		return ""
	}
	names := c.NodeNames()
	if len(names) == 0 {
		return "The cluster has no nodes: nothing can be placed (is it the cluster you meant? --context, --kubeconfig, --snapshot)."
	}
	unreadable, version := 0, ""
	for _, name := range names {
		n := c.Node(name)
		if n == nil {
			continue
		}
		if n.Registered {
			return ""
		}
		if n.UnreadableBy != "" {
			unreadable, version = unreadable+1, n.UnreadableBy
		}
	}
	msg := fmt.Sprintf("No node registers devices HAMi schedules: is HAMi's device plugin or `kubectl hami agent` running? (%d %s, none with a readable hami.io/node-*-register annotation",
		len(names), pluralWord(len(names), "node", "nodes"))
	if unreadable > 0 {
		msg += fmt.Sprintf("; %d registered in a form HAMi %s cannot read, see --hami-version", unreadable, version)
	}
	return msg + ")"
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
