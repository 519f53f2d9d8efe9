package engine

// Which of a node's devices a request of a Kind is judged on: HAMi hands each request's Fit the node's devices
// whose type contains the request's type (getNodeResources, pkg/scheduler/score.go:43-52 at v2.10.0). A Kind
// that states the rule (device.Kind.Sees) may see devices another Kind registered (an Ascend910B4 request on
// Ascend910B4-1 NPUs), or miss some of its own; every other Kind sees its own devices.

// judgedBy marks, for each Kind with Sees whose view of the node is not exactly its own devices, the GPUs a
// request of the Kind is judged on (by position in n.GPUs); nil when every Kind sees its own devices, as on
// most nodes.
func (c *Cluster) judgedBy(n *Node) [][]bool {
	need := ^uint64(0) // the Kinds whose view of the node may differ from their own devices
	if len(c.kinds) <= 64 {
		// One look per device first: on most nodes no Kind's view differs, and no mask is made.
		need = 0
		for gi := range n.GPUs {
			g := &n.GPUs[gi]
			bits := c.seesBits(g.Type) // sets seesKinds on its first call
			need |= (bits ^ 1<<g.Kind) & c.seesKinds
		}
	}
	var out [][]bool
	for k := range c.kinds {
		if c.kinds[k].Sees == nil || k < 64 && need&(1<<k) == 0 {
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

// sees is Kinds[k].Sees(deviceType).
func (c *Cluster) sees(k int, deviceType string) bool {
	if len(c.kinds) > 64 {
		return c.kinds[k].Sees(deviceType)
	}
	return c.seesBits(deviceType)&(1<<k) != 0
}

// seesBits is, for a cluster of at most 64 Kinds, the Kinds whose Sees rule takes the device type (a bit
// per Kind), remembered per type: a rule reads the type alone, and a cluster has a few types on thousands of
// nodes (the rules compare case-folded substrings). It also sets seesKinds.
func (c *Cluster) seesBits(deviceType string) uint64 {
	if deviceType == c.seesLast.deviceType && c.seesByType != nil { // a node's devices are mostly of one type
		return c.seesLast.bits
	}
	if c.seesByType == nil {
		c.seesByType = map[string]uint64{}
		for j := range c.kinds {
			if c.kinds[j].Sees != nil {
				c.seesKinds |= 1 << j
			}
		}
	}
	bits, ok := c.seesByType[deviceType]
	if !ok {
		for j := range c.kinds {
			if see := c.kinds[j].Sees; see != nil && see(deviceType) {
				bits |= 1 << j
			}
		}
		c.seesByType[deviceType] = bits
	}
	c.seesLast.deviceType, c.seesLast.bits = deviceType, bits
	return bits
}
