package engine

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// podAllocationWire is a PodAllocation as JSON: its exported fields in their order, with Mig and VendorQuota
// (kept in the allocation's podRare: most pods have neither, and every counted pod keeps an allocation) where
// the fields stood. TestWireTypesHaveEveryField holds the two lists together.
type podAllocationWire struct {
	Namespace  string                `json:"namespace"`
	Name       string                `json:"name"`
	Node       string                `json:"node"`
	Containers []ContainerAllocation `json:"containers"`
	Uses       []GPUUse              `json:"uses"`
	Mig        []codec.MigAllocation `json:"mig,omitempty"`
	QuotaMem   int64                 `json:"quotaMemMiB"`
	QuotaCores int64                 `json:"quotaCores"`
	// VendorQuota is what the pod charges the quota keys of other device types (limits.hygon.com/dcumem ...),
	// by resource name.
	VendorQuota map[string]int64 `json:"vendorQuota,omitempty"`
	Terminating bool             `json:"terminating,omitempty"`
}

// MarshalJSON writes the allocation with its MIG instances and other types' quota charges. A value receiver,
// as Verdict's: an allocation written by value writes them too.
func (p PodAllocation) MarshalJSON() ([]byte, error) {
	return json.Marshal(&podAllocationWire{Namespace: p.Namespace, Name: p.Name, Node: p.Node, Containers: p.Containers,
		Uses: p.Uses, Mig: p.Mig(), QuotaMem: p.QuotaMem, QuotaCores: p.QuotaCores, VendorQuota: p.VendorQuota(),
		Terminating: p.Terminating})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (p *PodAllocation) UnmarshalJSON(data []byte) error {
	var w podAllocationWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*p = PodAllocation{Namespace: w.Namespace, Name: w.Name, Node: w.Node, Containers: w.Containers, Uses: w.Uses,
		QuotaMem: w.QuotaMem, QuotaCores: w.QuotaCores, Terminating: w.Terminating}
	if len(w.Mig) > 0 {
		p.rareFields().mig = w.Mig
	}
	p.setVendorQuota(w.VendorQuota)
	return nil
}
