package codec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field names of the legacy text form, by position. HAMi <= v2.4 writes the first 7, v2.5 to v2.7 all 9.
var registerFields = [...]string{"id", "count", "devmem", "devcore", "type", "numa", "health", "index", "mode"}

// DefaultMode is the device mode HAMi assumes when a register entry carries none.
const DefaultMode = "hami-core"

// ParseNodeRegister reads hami.io/node-nvidia-register in any of HAMi's three layouts: the v2.8+ JSON array
// (chosen when the trimmed value starts with `[`), or the legacy `:`-terminated text form with 7 or 9 fields per
// device. A blank value is an error: callers handle an absent annotation themselves. An empty list ("[]" or ":")
// gives nil. A negative NUMA node becomes 0, as HAMi does for sysfs's -1.
func ParseNodeRegister(value string) ([]DeviceInfo, error) {
	return ParseDeviceRegister(NodeRegisterAnnotation, value)
}

// ParseDeviceRegister reads any family's register annotation (hami.io/node-dcu-register,
// hami.io/node-register-Ascend910B3 ...): HAMi writes them all as the same JSON list of devices (its
// api.DeviceInfo; fields kubectl-hami does not use, such as customInfo, are ignored). key names the
// annotation in errors. The legacy text forms are read as for NVIDIA.
func ParseDeviceRegister(key, value string) ([]DeviceInfo, error) {
	trimmed := strings.TrimSpace(value)
	if trimmed == "" {
		return nil, errEmpty(key)
	}
	if trimmed[0] == '[' {
		return parseRegisterJSON(key, value)
	}
	return parseRegisterLegacy(key, trimmed)
}

func parseRegisterJSON(key, value string) ([]DeviceInfo, error) {
	devs, ok := fastRegister(strings.TrimFunc(value, unicode.IsSpace))
	if !ok {
		devs = nil
		if err := decodeJSONArray(key, value, &devs); err != nil {
			return nil, err
		}
	}
	if len(devs) == 0 {
		return nil, nil
	}
	for i := range devs {
		d := &devs[i]
		pos := func(field string) string { return fmt.Sprintf("device %d, field %s", i, field) }
		if d.ID == "" {
			return nil, &Error{Key: key, Pos: pos("id"), Msg: "is empty"}
		}
		for _, f := range []struct {
			name string
			v    int64
		}{{"count", int64(d.Count)}, {"devmem", d.Devmem}, {"devcore", d.Devcore}, {"index", int64(d.Index)}} {
			if f.v < 0 {
				return nil, &Error{Key: key, Pos: pos(f.name), Value: strconv.FormatInt(f.v, 10), Msg: "is negative"}
			}
			if msg := tooLarge(f.name, f.v); msg != "" {
				return nil, &Error{Key: key, Pos: pos(f.name), Value: strconv.FormatInt(f.v, 10), Msg: msg}
			}
		}
		normalizeDevice(d)
	}
	if strings.Contains(value, "NetworkID") {
		readNetworkIDs(value, devs)
	}
	return devs, nil
}

// readNetworkIDs reads each device's customInfo.NetworkID (Ascend's NPU network, which HAMi's Ascend Fit and
// ScoreNode read as a JSON number: pkg/device/ascend/device.go:388-421, 619-629 at v2.10.0). Go's JSON
// decoder matches customInfo's key in any case, as HAMi's does; any other shape reads as no NetworkID (the
// decoder goes on past a customInfo of another type, so its error is not needed: the list itself was read).
func readNetworkIDs(value string, devs []DeviceInfo) {
	var extra []struct {
		CustomInfo map[string]any `json:"customInfo"`
	}
	_ = json.Unmarshal([]byte(value), &extra)
	for i := range devs {
		if i >= len(extra) {
			return
		}
		if f, ok := extra[i].CustomInfo["NetworkID"].(float64); ok {
			id := int(f)
			devs[i].NetworkID = &id
		}
	}
}

// normalizeDevice applies the reader's leniencies and makes empty slices nil, so that a value read back after
// FormatNodeRegister (whose omitempty drops empty slices) compares equal.
func normalizeDevice(d *DeviceInfo) {
	if d.Numa < 0 {
		d.Numa = 0
	}
	if len(d.MigProfiles) == 0 {
		d.MigProfiles = nil
	}
	for j := range d.MigProfiles {
		if len(d.MigProfiles[j].Placements) == 0 {
			d.MigProfiles[j].Placements = nil
		}
	}
}

func parseRegisterLegacy(key, value string) ([]DeviceInfo, error) {
	var devs []DeviceInfo
	for _, seg := range strings.Split(value, ":") {
		// Every device is followed by ':', so an empty last segment is normal; blank ones elsewhere are tolerated.
		if strings.TrimSpace(seg) == "" {
			continue
		}
		n := len(devs)
		d, err := parseLegacyDevice(key, n, seg)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// parseLegacyDevice reads one `id,count,devmem,devcore,type,numa,health[,index,mode]` entry; n is its position.
func parseLegacyDevice(key string, n int, seg string) (DeviceInfo, error) {
	f := strings.Split(seg, ",")
	if len(f) != 7 && len(f) != 9 {
		return DeviceInfo{}, &Error{Key: key, Pos: fmt.Sprintf("device %d", n), Value: seg,
			Msg: fmt.Sprintf("has %d fields, want 7 (HAMi <= v2.4) or 9", len(f))}
	}
	fieldErr := func(i int, msg string) error {
		return &Error{Key: key, Pos: fmt.Sprintf("device %d, field %d (%s)", n, i, registerFields[i]), Value: f[i], Msg: msg}
	}
	num := func(i, bits int) (int64, error) {
		v, err := strconv.ParseInt(f[i], 10, bits)
		if err != nil {
			if f[i] == "" {
				return 0, fieldErr(i, "is empty, want an integer")
			}
			return 0, fieldErr(i, fmt.Sprintf("is not an integer (%d-bit)", bits))
		}
		return v, nil
	}
	d := DeviceInfo{ID: f[0], Type: f[4]}
	if d.ID == "" {
		return DeviceInfo{}, fieldErr(0, "is empty")
	}
	// The API server only stores UTF-8; a broken string would also not survive FormatNodeRegister's JSON.
	for _, i := range []int{0, 4, 8} {
		if i < len(f) && !utf8.ValidString(f[i]) {
			return DeviceInfo{}, fieldErr(i, "is not valid UTF-8")
		}
	}
	count, err := num(1, 32)
	if err != nil {
		return DeviceInfo{}, err
	}
	if d.Devmem, err = num(2, 64); err != nil {
		return DeviceInfo{}, err
	}
	if d.Devcore, err = num(3, 64); err != nil {
		return DeviceInfo{}, err
	}
	numa, err := num(5, strconv.IntSize)
	if err != nil {
		return DeviceInfo{}, err
	}
	d.Count, d.Numa = int32(count), int(numa)
	if d.Health, err = strconv.ParseBool(f[6]); err != nil {
		return DeviceInfo{}, fieldErr(6, "is not a boolean")
	}
	// HAMi <= v2.4 has no index field; it registered GPUs in NVML order, so the position is the index.
	d.Index = n
	if len(f) == 9 {
		idx, err := num(7, strconv.IntSize)
		if err != nil {
			return DeviceInfo{}, err
		}
		d.Index = int(idx)
		d.Mode = f[8]
	}
	for _, c := range []struct {
		i int
		v int64
	}{{1, int64(d.Count)}, {2, d.Devmem}, {3, d.Devcore}, {7, int64(d.Index)}} {
		if c.v < 0 {
			return DeviceInfo{}, fieldErr(c.i, "is negative")
		}
		if msg := tooLarge(registerFieldNames[c.i], c.v); msg != "" {
			return DeviceInfo{}, fieldErr(c.i, msg)
		}
	}
	normalizeDevice(&d)
	return d, nil
}

// FormatNodeRegister writes the v2.8+ JSON array. Zero fields are left out (omitempty), as HAMi writes them;
// no devices give "[]".
func FormatNodeRegister(devs []DeviceInfo) string {
	if devs == nil {
		devs = []DeviceInfo{}
	}
	return mustJSON(devs)
}

// FormatNodeRegisterLegacy writes the 9-field text form of HAMi v2.5 to v2.7, each device followed by ':'.
// An empty mode is written as hami-core, since those versions always wrote one. MIG profiles have no place in
// this form and are dropped. IDs, types or modes holding ',' or ':' cannot be written in this form.
func FormatNodeRegisterLegacy(devs []DeviceInfo) string {
	var b strings.Builder
	for _, d := range devs {
		mode := d.Mode
		if mode == "" {
			mode = DefaultMode
		}
		fmt.Fprintf(&b, "%s,%d,%d,%d,%s,%d,%t,%d,%s:", d.ID, d.Count, d.Devmem, d.Devcore, d.Type, d.Numa, d.Health, d.Index, mode)
	}
	return b.String()
}

// registerFieldNames names the bounded fields of the colon format by position.
var registerFieldNames = map[int]string{1: "count", 2: "devmem", 3: "devcore", 7: "index"}

// tooLarge says why a registered count, devmem or devcore is above its bound, or "".
func tooLarge(field string, v int64) string {
	var limit int64
	switch field {
	case "count":
		limit = MaxSlots
	case "devmem":
		limit = MaxMemMiB
	case "devcore":
		limit = MaxCores
	default:
		return ""
	}
	if v > limit {
		return fmt.Sprintf("is larger than %d, more than any GPU has", limit)
	}
	return ""
}

// Register formats, as RegisterFormat names them.
const (
	RegisterJSON   = "json"   // HAMi v2.8 and later
	RegisterText9  = "text-9" // v2.5 to v2.7: id,count,devmem,devcore,type,numa,health,index,mode
	RegisterText7  = "text-7" // v2.4 and earlier: id,count,devmem,devcore,type,numa,health
	RegisterNoForm = ""       // empty or neither
)

// RegisterFormat names the form of a hami.io/node-nvidia-register value by its first device, without
// checking the rest (ParseNodeRegister does that).
func RegisterFormat(value string) string {
	t := strings.TrimSpace(value)
	if t == "" {
		return RegisterNoForm
	}
	if t[0] == '[' {
		return RegisterJSON
	}
	first, _, _ := strings.Cut(t, ":")
	switch strings.Count(first, ",") + 1 {
	case 9:
		return RegisterText9
	case 7:
		return RegisterText7
	}
	return RegisterNoForm
}
