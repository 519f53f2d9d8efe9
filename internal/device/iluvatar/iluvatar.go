// Package iluvatar describes Iluvatar CoreX GPUs as HAMi v2.10 schedules them (pkg/device/iluvatar/device.go):
// one Kind per chip of the iluvatars section (MR-V100, MR-V50, BI-V150, BI-V100), each registering in
// hami.io/node-<chip>-register, memory requested in 256 MiB units, no type selector.
package iluvatar

import (
	"encoding/json"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// MemoryFactor is MiB per unit of iluvatar.ai/<chip>.vMem.
const MemoryFactor = 256

// Family is Iluvatar.
type Family struct{}

func (Family) Name() string    { return "iluvatar" }
func (Family) Section() string { return "iluvatars" }

// Config is one chip of the iluvatars section.
type Config struct {
	ChipName           string `json:"chipName"`
	CommonWord         string `json:"commonWord"`
	ResourceCountName  string `json:"resourceCountName"`
	ResourceMemoryName string `json:"resourceMemoryName"`
	ResourceCoreName   string `json:"resourceCoreName"`
}

// Defaults are the chips of HAMi v2.10's chart.
var Defaults = []Config{{CommonWord: "MR-V100"}, {CommonWord: "MR-V50"}, {CommonWord: "BI-V150"}, {CommonWord: "BI-V100"}}

// Kinds returns one Kind per chip.
func (Family) Kinds(section json.RawMessage) ([]device.Kind, error) {
	var cfgs []Config
	if err := device.Decode("iluvatars", section, &cfgs); err != nil {
		return nil, err
	}
	if len(cfgs) == 0 {
		cfgs = Defaults
	}
	out := make([]device.Kind, 0, len(cfgs))
	for _, c := range cfgs {
		w := c.CommonWord
		out = append(out, device.Kind{
			Vendor: "iluvatar", Name: w, Word: "GPU",
			Register:   "hami.io/node-" + w + "-register",
			Handshake:  "hami.io/node-handshake-" + w,
			ToAllocate: "hami.io/" + w + "-devices-to-allocate",
			Allocated:  "hami.io/" + w + "-devices-allocated",
			UseUUID:    "hami.io/use-" + w + "-uuid", NoUseUUID: "hami.io/no-use-" + w + "-uuid",
			Count:        device.Or(c.ResourceCountName, "iluvatar.ai/"+w+"-vgpu"),
			Memory:       device.Or(c.ResourceMemoryName, "iluvatar.ai/"+w+".vMem"),
			Cores:        device.Or(c.ResourceCoreName, "iluvatar.ai/"+w+".vCore"),
			MemoryFactor: MemoryFactor,
			ReadRequest:  device.Share{Cores: device.ManyTakeWholeCores}.Read,
		})
	}
	return out, nil
}
