package engine

// How the surfaces name a type's devices: its word, plural, cores unit and template.

import (
	"strconv"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// Word is what people call one device of the GPU's type: GPU, DCU, NPU ...
func (c *Cluster) Word(g *GPU) string { return c.kinds[g.Kind].Word }

// inWords rewrites the engine's sentences about GPUs for a pod that asks for another type's devices only:
// "GPU" becomes the type's word (NPU, DCU ...); "vGPU" (the slot) stays.
func inWords(lines []string, word string) []string {
	if word == "GPU" {
		return lines
	}
	r := strings.NewReplacer("vGPU", "vGPU", "GPU", word)
	for i, l := range lines {
		lines[i] = r.Replace(l)
	}
	return lines
}

// deviceSuffix names the device type and template of a container's request, for other types than NVIDIA's.
func deviceSuffix(r *ContainerRequest) string {
	switch {
	case r.Device == "":
		return ""
	case r.Template != "":
		return " (" + r.Device + ", vNPU template " + r.Template + ")"
	}
	return " (" + r.Device + ")"
}

// pluralWords are the kinds' words in the plural, a Check's unit ("GPUs", "NPUs").
func pluralWords(kinds []device.Kind) []string {
	out := make([]string, len(kinds))
	for i := range kinds {
		out[i] = kinds[i].Word + "s"
	}
	return out
}

// coresText says a container's cores per device: "30% cores", or "1 NeuronCores" for a type whose cores
// resource counts cores (device.Kind.CoresUnit); a whole-device request is "100% cores".
func coresText(r *ContainerRequest) string {
	if r.coresUnit != "" && !r.CoresOfDevice {
		return strconv.FormatInt(r.Cores, 10) + " " + r.coresUnit
	}
	return strconv.FormatInt(r.Cores, 10) + "% cores"
}

// coresUnitOf is the unit the pod's containers ask cores in when every one of them counts cores
// (device.Kind.CoresUnit: "NeuronCores"); "" when any asks a percentage.
func coresUnitOf(req *PodRequest) string {
	unit := ""
	for i := range req.Containers {
		u := req.Containers[i].coresUnit
		if u == "" || unit != "" && u != unit {
			return ""
		}
		unit = u
	}
	return unit
}
