package nvidia

// NVIDIA's request reader: a container's nvidia.com resources read as HAMi's GenerateResourceRequests for
// NVIDIA does (pkg/device/nvidia/device.go), with the nvidia section's defaultMemory, defaultCores and
// memoryFactor.

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// requestReader reads a container's request with the section's defaults: no GPU count asks for nothing;
// gpumem (times memoryFactor) beats gpumem-percentage (clamped to 100); neither gives defaultMemory or 100 %
// of each GPU; cores default to defaultCores and are clamped to 100 silently, as HAMi does.
func requestReader(defaultMemory, defaultCores int64) device.RequestReader {
	return func(k *device.Kind, r *device.Reading) (device.Ask, bool) {
		count, _, ok := device.ReadCount(k, r)
		if !ok {
			return device.Ask{}, false
		}
		a := device.Ask{Count: int(count)}
		mem, hasMem := memoryMiB(k, r)
		pct, hasPct := r.Value(k.MemoryPercent)
		factor := max(k.MemoryFactor, 1)
		switch {
		case hasMem && mem > 0:
			if mem > device.MaxRequestValue/factor {
				r.Bad.Report(r.Field(k.Memory), "%d MiB times memoryFactor %d is beyond any GPU; clamped to %d", mem, factor, device.MaxRequestValue)
				a.MemoryMiB = device.MaxRequestValue
			} else {
				a.MemoryMiB = mem * factor
			}
		case hasPct && pct > 0:
			if pct > 100 {
				r.Bad.Report(r.Field(k.MemoryPercent), "%d%% is above 100%%; clamped to 100%%", pct)
				pct = 100
			}
			a.MemoryPercent = pct
		case defaultMemory > 0:
			a.MemoryMiB, a.MemoryDefaulted = defaultMemory*factor, true
		default:
			a.MemoryPercent, a.MemoryDefaulted = 100, true
		}
		if hasMem && mem < 0 {
			r.Bad.Report(r.Field(k.Memory), "negative memory %d is ignored", mem)
		}
		if hasPct && pct < 0 {
			r.Bad.Report(r.Field(k.MemoryPercent), "negative percentage %d is ignored", pct)
		}
		cores, hasCores := r.Value(k.Cores)
		if !hasCores {
			cores = defaultCores
		}
		switch {
		case cores < 0:
			r.Bad.Report(r.Field(k.Cores), "negative cores %d are ignored", cores)
			cores = 0
		case cores > 100:
			cores = 100 // HAMi clamps silently: a GPU has at most 100 % of itself
		}
		a.Cores = cores
		return a, true
	}
}

// memoryMiB is the container's gpumem, with a warning when it is written with a unit: HAMi reads it as a
// plain number of MiB.
func memoryMiB(k *device.Kind, r *device.Reading) (int64, bool) {
	if k.Memory == "" {
		return 0, false
	}
	q, v, ok := r.Quantity(k.Memory)
	if !ok {
		return 0, false
	}
	if meant, ok := unitMiB(q); ok {
		r.Bad.Report(r.Field(k.Memory), "%s is in MiB, without a unit: %s reads as %d MiB; you probably meant %d", k.Memory, q.String(), v, meant)
	}
	return v, true
}

// unitMiB says what a memory quantity written with a unit suffix (16Gi, 16G, 500M) was probably meant to be,
// in MiB: HAMi reads nvidia.com/gpumem as a plain number of MiB, so "16Gi" asks for 17179869184 MiB.
func unitMiB(q resource.Quantity) (int64, bool) {
	s := q.String()
	if s == "" || s[len(s)-1] >= '0' && s[len(s)-1] <= '9' {
		return 0, false
	}
	if q.Format == resource.DecimalSI {
		// 16000 is printed 16k: only values at or above a gigabyte are plainly bytes, not MiB.
		if q.CmpInt64(1<<30) < 0 {
			return 0, false
		}
	}
	b := q.AsDec().UnscaledBig()
	b = new(big.Int).Set(b)
	scale := q.AsDec().Scale()
	if scale > 0 {
		b.Quo(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	} else if scale < 0 {
		b.Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	b.Quo(b, big.NewInt(1<<20))
	if !b.IsInt64() || b.Int64() <= 0 {
		return 0, false
	}
	return b.Int64(), true
}
