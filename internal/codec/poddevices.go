package codec

import (
	"fmt"
	"strconv"
	"strings"
)

// Field names of one device in a pod device list, by position.
var podDeviceFields = [...]string{"uuid", "vendor", "memory", "cores"}

// ParsePodDevices reads hami.io/vgpu-devices-allocated or hami.io/vgpu-devices-to-allocate; key only names the
// annotation in errors. Entries are separated by ';' and each is one container; devices within an entry end with
// ':' and are `UUID,Vendor,<MiB>,<cores>`. The reader accepts every layout HAMi has written:
//   - a trailing ';' ends the last entry rather than opening an empty one, and a last entry without ';' still counts;
//   - an empty entry is a container without GPUs (v2.9+ puts init containers first, hence a leading ';');
//   - devices with an empty UUID (old `,,0,0:` placeholders) are skipped;
//   - a MIG `[t-s]` UUID suffix (up to v2.9) is stripped;
//   - fields are trimmed, and fields after the fourth are ignored.
//
// An empty value is zero containers (HAMi blanks consumed entries), not an error.
func ParsePodDevices(key, value string) (PodDevices, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	// The entries are cut in place rather than split (every counted pod is read, so the slices
	// strings.Split makes per entry, device and field were most of the read's allocations).
	n := strings.Count(value, ";") + 1
	if strings.HasSuffix(value, ";") {
		n--
	}
	if n == 1 {
		// One container holding one device, as most pods: the list and its device in one allocation.
		one := new(struct {
			pd  [1]ContainerDevices
			dev [1]ContainerDevice
		})
		entry, _, _ := strings.Cut(value, ";")
		cd, err := parseContainerDevices(key, 0, entry, one.dev[:0])
		if err != nil {
			return nil, err
		}
		one.pd[0] = cd
		return one.pd[:], nil
	}
	pd := make(PodDevices, 0, n)
	rest := value
	for ci := 0; ci < n; ci++ {
		entry, after, _ := strings.Cut(rest, ";")
		rest = after
		cd, err := parseContainerDevices(key, ci, entry, nil)
		if err != nil {
			return nil, err
		}
		pd = append(pd, cd)
	}
	return pd, nil
}

// parseContainerDevices reads one ';'-separated entry; ci is its 0-based container position. room, when
// not nil, is an empty slice the devices go into while they fit.
func parseContainerDevices(key string, ci int, entry string, room ContainerDevices) (ContainerDevices, error) {
	var cd ContainerDevices
	di := 0
	for more := true; more; {
		var seg string
		seg, entry, more = strings.Cut(entry, ":")
		// A ':' ends each device, so empty segments are the normal tail rather than devices.
		if strings.TrimSpace(seg) == "" {
			continue
		}
		d, ok, err := parseContainerDevice(key, ci, di, seg)
		di++
		if err != nil {
			return nil, err
		}
		if ok {
			if cd == nil {
				if need := strings.Count(entry, ":") + 1; need <= cap(room) {
					cd = room
				} else {
					cd = make(ContainerDevices, 0, need)
				}
			}
			cd = append(cd, d)
		}
	}
	return cd, nil
}

// parseContainerDevice reads `UUID,Vendor,<MiB>,<cores>`; ok is false for an empty placeholder device.
func parseContainerDevice(key string, ci, di int, seg string) (ContainerDevice, bool, error) {
	if n := strings.Count(seg, ",") + 1; n < 4 {
		return ContainerDevice{}, false, &Error{Key: key, Pos: fmt.Sprintf("container %d, device %d", ci, di), Value: seg,
			Msg: fmt.Sprintf("has %d fields, want 4 (uuid,vendor,memory,cores)", n)}
	}
	var f [4]string
	rest := seg
	for i := range f {
		f[i], rest, _ = strings.Cut(rest, ",")
		f[i] = strings.TrimSpace(f[i])
	}
	uuid := stripMigSuffix(f[0])
	if uuid == "" {
		return ContainerDevice{}, false, nil
	}
	fieldErr := func(i int, msg string) error {
		return &Error{Key: key, Pos: fmt.Sprintf("container %d, device %d, field %d (%s)", ci, di, i, podDeviceFields[i]), Value: f[i], Msg: msg}
	}
	num := func(i int, limit int64) (int64, error) {
		v, err := strconv.ParseInt(f[i], 10, 64)
		switch {
		case err != nil && f[i] == "":
			return 0, fieldErr(i, "is empty, want an integer")
		case err != nil:
			return 0, fieldErr(i, "is not an integer")
		case v < 0:
			return 0, fieldErr(i, "is negative")
		case v > limit:
			return 0, fieldErr(i, fmt.Sprintf("is larger than %d, more than any GPU has", limit))
		}
		return v, nil
	}
	mem, err := num(2, MaxMemMiB)
	if err != nil {
		return ContainerDevice{}, false, err
	}
	cores, err := num(3, MaxCores)
	if err != nil {
		return ContainerDevice{}, false, err
	}
	return ContainerDevice{UUID: uuid, Type: f[1], UsedMem: mem, UsedCores: cores}, true, nil
}

// stripMigSuffix removes `[t-s]` suffixes (digits-digits in brackets) that HAMi up to v2.9 appended to a MIG GPU's
// UUID. It loops so that the result never ends in another such suffix, which keeps Format then Parse stable.
func stripMigSuffix(uuid string) string {
	for {
		s := strings.TrimSpace(uuid)
		if !strings.HasSuffix(s, "]") {
			return s
		}
		open := strings.LastIndexByte(s, '[')
		if open < 0 || !isMigSlice(s[open+1:len(s)-1]) {
			return s
		}
		uuid = s[:open]
	}
}

// isMigSlice reports whether s is `<digits>-<digits>`.
func isMigSlice(s string) bool {
	t, sl, ok := strings.Cut(s, "-")
	return ok && allDigits(t) && allDigits(sl)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatPodDevices writes the v2.9+ layout: one entry per container, empty ones included, each ended by ';', and
// each device ended by ':'. No containers give "".
func FormatPodDevices(pd PodDevices) string {
	var b strings.Builder
	for _, cd := range pd {
		for _, d := range cd {
			fmt.Fprintf(&b, "%s,%s,%d,%d:", d.UUID, d.Type, d.UsedMem, d.UsedCores)
		}
		b.WriteByte(';')
	}
	return b.String()
}
