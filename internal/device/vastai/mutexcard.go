package vastai

import (
	"fmt"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// MutexCardRow is die mode under the mutex policy (HAMi v2.10.0's Vastai Fit, pkg/device/vastai/device.go:
// 236-287): a card (AIC) is taken whole, so besides a used die (the mutex gate), an idle die on a card another
// of whose dies is in use conflicts. Dies carry their card as their interconnect group (readRegister); a
// device without one (card mode) passes.
var MutexCardRow = device.Row{
	Number: "13e", Name: "mutex-card", Code: "ExclusiveDeviceAllocateConflict",
	Meaning: "Vastai die mode with the mutex policy: no other die of the die's card is in use",
	Numbers: "the card's die in use",
	Hint:    "drop the mutex policy, or wait for a card with no die in use",
	Say: func(s device.Saying) string {
		return fmt.Sprintf("%d die(s) sit on a card another of whose dies is in use, and the mutex policy takes a card whole", s.GPUs)
	},
	Check: func(d *device.Dev) device.Outcome {
		if !d.Mutex {
			return device.Outcome{}
		}
		if u := d.GroupUsed(); u != "" {
			return device.Outcome{Fail: true, Detail: "die " + u + " of its card is in use; the mutex policy takes a card whole"}
		}
		return device.Outcome{}
	},
}
