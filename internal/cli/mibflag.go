package cli

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// mibFlag is --gpumem: a whole number, as HAMi counts nvidia.com/gpumem (MiB for NVIDIA, the device's own unit
// with --device). A Kubernetes quantity such as 16Gi is refused with the number it means in MiB, because a
// manifest's `nvidia.com/gpumem: 16Gi` is not 16384 MiB either (HAMi reads the quantity's value).
type mibFlag struct{ v *int64 }

func (f mibFlag) String() string { return strconv.FormatInt(*f.v, 10) }
func (f mibFlag) Type() string   { return "MiB" }

func (f mibFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		*f.v = n
		return nil
	}
	if q, qerr := resource.ParseQuantity(s); qerr == nil {
		if mib := q.Value() >> 20; mib > 0 && q.Value()%(1<<20) == 0 {
			return fmt.Errorf("a whole number of MiB, as nvidia.com/gpumem counts it, not a quantity: %s is --gpumem %d", s, mib)
		}
		return fmt.Errorf("a whole number of MiB, as nvidia.com/gpumem counts it, not a quantity (16Gi is --gpumem 16384)")
	}
	return fmt.Errorf("want a whole number of MiB, e.g. --gpumem 16384")
}
