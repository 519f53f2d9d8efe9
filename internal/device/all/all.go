// Package all is the registry of device families: one line per family. NVIDIA comes first; the others are
// tried in this order when a container's resources are read. A family is registered like any other: its
// package implements device.Family, and its line here is all the engine needs.
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

// Families lists every family kubectl-hami schedules.
var Families = []device.Family{
	nvidia.Family{},
	hygon.Family{},
	ascend.Family{},
	cambricon.Family{},
	iluvatar.Family{},
	metax.Family{},
	metaxsgpu.Family{},
	mthreads.Family{},
	kunlun.Family{},
	awsneuron.Family{},
	enflame.Family{},
	amd.Family{},
	biren.Family{},
	vastai.Family{},
}

// Kinds returns the Kinds of every family but NVIDIA (whose Kind the engine builds from the resource names
// of its own Config, HAMi's nvidia section), from the sections of HAMi's device-config.yaml (absent
// sections: the chart defaults).
func Kinds(sections map[string]json.RawMessage) ([]device.Kind, error) {
	var out []device.Kind
	for _, f := range Families {
		if f.Name() == nvidia.FamilyName {
			continue
		}
		ks, err := FamilyKinds(f, sections[f.Section()])
		if err != nil {
			return nil, err
		}
		out = append(out, ks...)
	}
	return out, nil
}

// FamilyKinds is one family's Kinds from its section, each validated.
func FamilyKinds(f device.Family, section json.RawMessage) ([]device.Kind, error) {
	ks, err := f.Kinds(section)
	if err != nil {
		return nil, err
	}
	for i := range ks {
		if err := ks[i].Validate(); err != nil {
			return nil, fmt.Errorf("family %s: %w", f.Name(), err)
		}
	}
	return ks, nil
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
	out := make([]string, 0, len(Families))
	for _, f := range Families {
		out = append(out, f.Section())
	}
	return out
}
