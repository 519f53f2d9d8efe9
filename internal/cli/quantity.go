package cli

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// plainQuantity writes a ResourceQuota status quantity as the whole number HAMi's columns use beside it
// (48000, not "48k": HAMi's memory resources count MiB, its cores percent). A fractional quantity keeps its
// Kubernetes form.
func plainQuantity(q resource.Quantity) string {
	if v, ok := q.AsInt64(); ok {
		return fmt.Sprint(v)
	}
	return q.String()
}
