package metaxsgpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Info is one entry of metax-tech.com/node-gpu-devices (MetaxSDeviceInfo, protocol.go). The available* fields
// are the plugin's own view; HAMi schedules from the totals.
type Info struct {
	UUID              string `json:"uuid"`
	BDF               string `json:"bdf,omitempty"`
	Model             string `json:"model,omitempty"`
	TotalDevCount     int64  `json:"totalDevCount,omitempty"`
	TotalCompute      int64  `json:"totalCompute,omitempty"`
	TotalVRam         int64  `json:"totalVRam,omitempty"`
	AvailableDevCount int64  `json:"availableDevCount,omitempty"`
	AvailableCompute  int64  `json:"availableCompute,omitempty"`
	AvailableVRam     int64  `json:"availableVRam,omitempty"`
	Numa              int64  `json:"numa,omitempty"`
	Healthy           bool   `json:"healthy,omitempty"`
	QosPolicy         string `json:"qosPolicy,omitempty"`
	LinkZone          int64  `json:"linkZone,omitempty"`
}

// ParseRegister reads the sGPU register annotation into devices the way HAMi's getMetaxSDevices and
// convertMetaxSDeviceToHAMIDevice do: the i-th entry is device i, typed Metax-SGPU, with totalDevCount
// slots, totalVRam MiB and totalCompute %. HAMi refuses a list that is not JSON or is empty; kubectl-hami
// also refuses what HAMi's int32 fields cannot hold and an entry without a uuid, naming the entry.
func ParseRegister(key, value string) ([]codec.DeviceInfo, error) {
	if !utf8.ValidString(value) {
		return nil, fmt.Errorf("%s: not UTF-8", key)
	}
	var infos []*Info
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	if err := dec.Decode(&infos); err != nil {
		return nil, fmt.Errorf("%s: not a JSON list of MetaX sGPU devices: %w", key, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: text after the JSON list", key)
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("%s: no sGPU registered (an empty list)", key)
	}
	out := make([]codec.DeviceInfo, 0, len(infos))
	for i, d := range infos {
		if d == nil || d.UUID == "" {
			return nil, fmt.Errorf("%s: entry %d: no uuid", key, i)
		}
		for _, f := range []struct {
			name string
			v    int64
		}{{"totalDevCount", d.TotalDevCount}, {"totalCompute", d.TotalCompute}, {"totalVRam", d.TotalVRam}, {"numa", d.Numa}} {
			if f.v < 0 || f.v > math.MaxInt32 {
				return nil, fmt.Errorf("%s: entry %d (%s): %s %d is out of range 0..%d", key, i, d.UUID, f.name, f.v, math.MaxInt32)
			}
		}
		dev := codec.DeviceInfo{ID: d.UUID, Index: i, Count: int32(d.TotalDevCount), Devmem: d.TotalVRam,
			Devcore: d.TotalCompute, Type: Name, Numa: int(d.Numa), Health: d.Healthy, QosPolicy: d.QosPolicy}
		// The MetaLink zone rides as the device's interconnect group (device.Candidate.Group) for Prioritize;
		// HAMi reads it as an int32 (protocol.go:63), 0 for none.
		if z := int32(d.LinkZone); z != 0 && int64(z) == d.LinkZone {
			zone := int(z)
			dev.NetworkID = &zone
		}
		out = append(out, dev)
	}
	return out, nil
}

// FormatRegister writes devices back in the plugin's layout (tests and demos).
func FormatRegister(devs []codec.DeviceInfo) string {
	infos := make([]Info, len(devs))
	for i, d := range devs {
		infos[i] = Info{UUID: d.ID, TotalDevCount: int64(d.Count), TotalCompute: d.Devcore, TotalVRam: d.Devmem, Numa: int64(d.Numa), Healthy: d.Health, QosPolicy: d.QosPolicy}
		if d.NetworkID != nil {
			infos[i].LinkZone = int64(*d.NetworkID)
		}
	}
	b, _ := json.Marshal(infos)
	return string(b)
}
