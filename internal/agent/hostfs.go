package agent

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// SysfsBusID turns NVML's PCI bus id ("00000000:3B:00.0", an 8-digit domain in upper case) into the name of the
// device under /sys/bus/pci/devices ("0000:3b:00.0", a 4-digit domain in lower case).
func SysfsBusID(nvmlBusID string) string {
	id := strings.ToLower(strings.TrimSpace(nvmlBusID))
	domain, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	if len(domain) > 4 {
		if strings.Trim(domain[:len(domain)-4], "0") != "" {
			return id // a domain above 0xffff: keep it whole
		}
		domain = domain[len(domain)-4:]
	}
	return domain + ":" + rest
}

// NumaNode reads <sysRoot>/bus/pci/devices/<busid>/numa_node. A missing or unreadable file, or a negative value
// (sysfs writes -1 on machines with one NUMA node), gives 0, as HAMi does.
func NumaNode(sysRoot, nvmlBusID string) int {
	if nvmlBusID == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(sysRoot, "bus", "pci", "devices", SysfsBusID(nvmlBusID), "numa_node"))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// podUIDPattern finds the pod UID in a cgroup path. kubelet writes it as "pod<uid>" with the cgroupfs driver
// (/kubepods/burstable/pod1b2c...-.../<container>) and as "pod<uid with _ for ->" inside a slice name with the
// systemd driver (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c..._....slice/...).
var podUIDPattern = regexp.MustCompile(`pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12})`)

// containerIDPattern finds a 64-hex container ID at the end of a cgroup path, after an optional runtime prefix
// ("cri-containerd-", "docker-", "crio-", ...) and before an optional ".scope".
var containerIDPattern = regexp.MustCompile(`(?:^|[-/])([0-9a-f]{64})(?:\.scope)?$`)

// PodOfPID reads <procRoot>/<pid>/cgroup and returns the UID of the pod the process runs in and its container
// ID (empty when not found). ok is false when the process is not in a pod (or is gone).
func PodOfPID(procRoot string, pid uint32) (podUID, containerID string, ok bool) {
	f, err := os.Open(filepath.Join(procRoot, strconv.FormatUint(uint64(pid), 10), "cgroup"))
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if uid, cid, found := ParseCgroupLine(sc.Text()); found {
			return uid, cid, true
		}
	}
	return "", "", false
}

// ParseCgroupLine reads one line of /proc/<pid>/cgroup ("hierarchy:controllers:path", cgroup v1 or v2) and returns
// the pod UID (with dashes) and the container ID found in its path.
func ParseCgroupLine(line string) (podUID, containerID string, ok bool) {
	// The path is everything after the second ':' (a path may itself hold ':').
	_, rest, ok1 := strings.Cut(line, ":")
	_, path, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return "", "", false
	}
	m := podUIDPattern.FindStringSubmatch(path)
	if m == nil {
		return "", "", false
	}
	podUID = strings.ToLower(strings.ReplaceAll(m[1], "_", "-"))
	if c := containerIDPattern.FindStringSubmatch(strings.TrimRight(path, "/")); c != nil {
		containerID = c[1]
	}
	return podUID, containerID, true
}
