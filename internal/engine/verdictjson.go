package engine

import "encoding/json"

// verdictWire is a Verdict as JSON: its exported fields in their order, with the fitting nodes as "feasible"
// and the node statuses as "nodes" where the fields stood before they became methods (Verdict.Feasible, Nodes). TestWireTypesHaveEveryField holds the two
// lists together.
type verdictWire struct {
	Pod          string         `json:"pod"`
	Scheduler    string         `json:"scheduler,omitempty"`
	NotHAMi      bool           `json:"notHAMi,omitempty"`
	Routing      string         `json:"routing,omitempty"`
	Request      *PodRequest    `json:"request"`
	NoGPURequest bool           `json:"noGPURequest,omitempty"`
	Fits         bool           `json:"fits"`
	Placement    *Placement     `json:"placement,omitempty"`
	Feasible     []string       `json:"feasible,omitempty"` // feasible nodes, best first
	Summary      string         `json:"summary"`
	Explanation  []string       `json:"explanation,omitempty"`
	Reasons      []ReasonCount  `json:"reasons,omitempty"`
	Nodes        []NodeStatus   `json:"nodes"`
	Quota        QuotaStatus    `json:"quota"`
	Card         *CardStatus    `json:"card,omitempty"`
	Enqueue      *EnqueueStatus `json:"enqueue,omitempty"`
	Hints        []string       `json:"hints,omitempty"`
	Fixes        []Fix          `json:"fixes,omitempty"`
	Problems     []Problem      `json:"problems,omitempty"`
}

// MarshalJSON writes the verdict with its node statuses and fitting nodes. A value receiver: a Verdict written
// by value (in a map, a struct field that is not a pointer) writes them too.
func (v Verdict) MarshalJSON() ([]byte, error) {
	return json.Marshal(&verdictWire{Pod: v.Pod, Scheduler: v.Scheduler, NotHAMi: v.NotHAMi, Routing: v.Routing,
		Request: v.Request, NoGPURequest: v.NoGPURequest, Fits: v.Fits, Placement: v.Placement, Feasible: v.Feasible(),
		Summary: v.Summary, Explanation: v.Explanation, Reasons: v.Reasons, Nodes: v.Nodes(), Quota: v.Quota,
		Card: v.Card, Enqueue: v.Enqueue, Hints: v.Hints, Fixes: v.Fixes, Problems: v.Problems})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (v *Verdict) UnmarshalJSON(data []byte) error {
	var w verdictWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*v = Verdict{Pod: w.Pod, Scheduler: w.Scheduler, NotHAMi: w.NotHAMi, Routing: w.Routing, Request: w.Request,
		NoGPURequest: w.NoGPURequest, Fits: w.Fits, Placement: w.Placement, Summary: w.Summary,
		Explanation: w.Explanation, Reasons: w.Reasons, Quota: w.Quota, Card: w.Card, Enqueue: w.Enqueue,
		Hints: w.Hints, Fixes: w.Fixes, Problems: w.Problems, nodes: w.Nodes, feasible: w.Feasible}
	return nil
}
