package engine

// Which of a node's devices a request of a Kind is judged on: HAMi hands each request's Fit the node's devices
// whose type contains the request's type (getNodeResources, pkg/scheduler/score.go:43-52 at v2.10.0). A Kind
// that states the rule (device.Kind.Sees) may see devices another Kind registered (an Ascend910B4 request on
// Ascend910B4-1 NPUs), or miss some of its own; every other Kind sees its own devices.

// judgedBy marks, for each Kind with Sees whose view of the node is not exactly its own devices, the GPUs a
// request of the Kind is judged on (by position in n.GPUs); nil when every Kind sees its own devices, as on
// most nodes.
func (c *Cluster) judgedBy(n *Node) [][]bool {
	var out [][]bool
	for k := range c.kinds {
		if c.kinds[k].Sees == nil {
			continue
		}
		var mask []bool
		for gi := range n.GPUs {
			g := &n.GPUs[gi]
			if seen := c.sees(k, g.Type); seen != (int(g.Kind) == k) && mask == nil {
				mask = make([]bool, len(n.GPUs))
				for j := 0; j < gi; j++ {
					mask[j] = int(n.GPUs[j].Kind) == k
				}
			}
			if mask != nil {
				mask[gi] = c.sees(k, g.Type)
			}
		}
		if mask != nil {
			if out == nil {
				out = make([][]bool, len(c.kinds))
			}
			out[k] = mask
		}
	}
	return out
}

// judgedMask is the node's GPUs a request of kind k is judged on, by position; nil means the Kind's own.
func (n *Node) judgedMask(k int) []bool {
	if n.judged == nil {
		return nil
	}
	return n.judged[k]
}

// judges reports whether a request of kind k is judged on GPU gi.
func (n *Node) judges(k, gi int) bool {
	if m := n.judgedMask(k); m != nil {
		return m[gi]
	}
	return int(n.GPUs[gi].Kind) == k
}

// devicesFor is how many of the node's devices a request of kind k is judged on: HAMi's len(devices) in its
// count check and reasons.
func (n *Node) devicesFor(k int) int {
	m := n.judgedMask(k)
	if m == nil {
		return n.DevicesOf(k)
	}
	count := 0
	for _, seen := range m {
		if seen {
			count++
		}
	}
	return count
}

// sees is Kinds[k].Sees(deviceType), remembered per device type: a rule reads the type alone, and a cluster
// has a few types on thousands of nodes (the rules compare case-folded substrings).
func (c *Cluster) sees(k int, deviceType string) bool {
	if len(c.kinds) > 64 {
		return c.kinds[k].Sees(deviceType)
	}
	if deviceType == c.seesLast.deviceType && c.seesByType != nil { // a node's devices are mostly of one type
		return c.seesLast.bits&(1<<k) != 0
	}
	bits, ok := c.seesByType[deviceType]
	if !ok {
		for j := range c.kinds {
			if see := c.kinds[j].Sees; see != nil && see(deviceType) {
				bits |= 1 << j
			}
		}
		if c.seesByType == nil {
			c.seesByType = map[string]uint64{}
		}
		c.seesByType[deviceType] = bits
	}
	c.seesLast.deviceType, c.seesLast.bits = deviceType, bits
	return bits&(1<<k) != 0
}
