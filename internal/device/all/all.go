// Package all is the registry of device families: one line per family. NVIDIA comes first; the others are
// tried in this order when a container's resources are read.
package all

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
	"github.com/kubectl-hami/kubectl-hami/internal/device/amd"
	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	"github.com/kubectl-hami/kubectl-hami/internal/device/awsneuron"
	"github.com/kubectl-hami/kubectl-hami/internal/device/biren"
	"github.com/kubectl-hami/kubectl-hami/internal/device/cambricon"
	"github.com/kubectl-hami/kubectl-hami/internal/device/enflame"
	"github.com/kubectl-hami/kubectl-hami/internal/device/hygon"
	"github.com/kubectl-hami/kubectl-hami/internal/device/iluvatar"
	"github.com/kubectl-hami/kubectl-hami/internal/device/kunlun"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metax"
	"github.com/kubectl-hami/kubectl-hami/internal/device/metaxsgpu"
	"github.com/kubectl-hami/kubectl-hami/internal/device/mthreads"
	"github.com/kubectl-hami/kubectl-hami/internal/device/nvidia"
	"github.com/kubectl-hami/kubectl-hami/internal/device/vastai"
)

// Vendors lists every family kubectl-hami schedules.
var Vendors = []device.Vendor{
	nvidia.Vendor{},
	hygon.Vendor{},
	ascend.Vendor{},
	cambricon.Vendor{},
	iluvatar.Vendor{},
	metax.Vendor{},
	metaxsgpu.Vendor{},
	mthreads.Vendor{},
	kunlun.Vendor{},
	awsneuron.Vendor{},
	enflame.Vendor{},
	amd.Vendor{},
	biren.Vendor{},
	vastai.Vendor{},
}

// Kinds returns the Kinds of every family but NVIDIA (whose Kind the engine builds from its own Config),
// from the sections of HAMi's device-config.yaml (absent sections: the chart defaults).
func Kinds(sections map[string]json.RawMessage) ([]device.Kind, error) {
	var out []device.Kind
	for _, v := range Vendors {
		if v.Name() == "nvidia" {
			continue
		}
		ks, err := v.Kinds(sections[v.Section()])
		if err != nil {
			return nil, err
		}
		for i := range ks {
			if err := ks[i].Validate(); err != nil {
				return nil, fmt.Errorf("vendor %s: %w", v.Name(), err)
			}
		}
		out = append(out, ks...)
	}
	return out, nil
}

var defaults = sync.OnceValue(func() []device.Kind {
	ks, err := Kinds(nil)
	if err != nil {
		panic(err) // the built-in defaults are valid; a test proves it
	}
	return ks
})

// Defaults are the Kinds of HAMi's chart defaults, built once. The slice must not be modified.
func Defaults() []device.Kind { return defaults() }

// Sections lists the device-config.yaml keys the families read, NVIDIA's included.
func Sections() []string {
	out := make([]string, 0, len(Vendors))
	for _, v := range Vendors {
		out = append(out, v.Section())
	}
	return out
}
