package engine

import "fmt"

// Problem is bad input the engine met and worked around: it names the object and the field so that an
// admin can fix it, and the engine keeps going with the rest of the cluster.
type Problem struct {
	Kind    string `json:"kind"`   // Node, Pod, ResourceQuota
	Object  string `json:"object"` // name, or namespace/name
	Field   string `json:"field"`  // annotation key or spec path
	Message string `json:"message"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s %s: %s: %s", p.Kind, p.Object, p.Field, p.Message)
}
