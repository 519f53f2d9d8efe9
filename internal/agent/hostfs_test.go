package agent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSysfsBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:3B:00.0": "0000:3b:00.0",
		"0000:3b:00.0":     "0000:3b:00.0",
		"00010000:B7:00.0": "00010000:b7:00.0", // a domain above 0xffff stays whole
		"":                 "",
	} {
		if got := SysfsBusID(in); got != want {
			t.Errorf("SysfsBusID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNumaNode(t *testing.T) {
	root := t.TempDir()
	write := func(bus, v string) {
		dir := filepath.Join(root, "bus", "pci", "devices", bus)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "numa_node"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0000:3b:00.0", "1\n")
	write("0000:86:00.0", "-1\n")
	write("0000:af:00.0", "garbage")
	for bus, want := range map[string]int{
		"00000000:3B:00.0": 1,
		"00000000:86:00.0": 0, // sysfs writes -1 on single-node machines
		"00000000:AF:00.0": 0,
		"00000000:D8:00.0": 0, // no such device
		"":                 0,
	} {
		if got := NumaNode(root, bus); got != want {
			t.Errorf("NumaNode(%q) = %d, want %d", bus, got, want)
		}
	}
}

func TestParseCgroupLine(t *testing.T) {
	const uid = "1b2c3d4e-5f60-4718-293a-4b5c6d7e8f90"
	const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name, line, uid, cid string
		ok                   bool
	}{
		{"v2 systemd containerd", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_5f60_4718_293a_4b5c6d7e8f90.slice/cri-containerd-" + cid + ".scope", uid, cid, true},
		{"v2 systemd cri-o", "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1b2c3d4e_5f60_4718_293a_4b5c6d7e8f90.slice/crio-" + cid + ".scope", uid, cid, true},
		{"v2 guaranteed (no QoS slice)", "0::/kubepods.slice/kubepods-pod1b2c3d4e_5f60_4718_293a_4b5c6d7e8f90.slice/docker-" + cid + ".scope", uid, cid, true},
		{"v1 cgroupfs", "12:memory:/kubepods/burstable/pod" + uid + "/" + cid, uid, cid, true},
		{"v1 cgroupfs, upper-case UID", "4:devices:/kubepods/pod1B2C3D4E-5F60-4718-293A-4B5C6D7E8F90/" + cid, uid, cid, true},
		{"v1 pod cgroup itself (pause)", "3:cpu,cpuacct:/kubepods/besteffort/pod" + uid, uid, "", true},
		{"host process", "0::/system.slice/nvidia-persistenced.service", "", "", false},
		{"root", "0::/", "", "", false},
		{"garbage", "no colons here", "", "", false},
	} {
		uid, cid, ok := ParseCgroupLine(c.line)
		if uid != c.uid || cid != c.cid || ok != c.ok {
			t.Errorf("%s: ParseCgroupLine = %q, %q, %v; want %q, %q, %v", c.name, uid, cid, ok, c.uid, c.cid, c.ok)
		}
	}
}

func TestPodOfPID(t *testing.T) {
	root := t.TempDir()
	const uid = "1b2c3d4e-5f60-4718-293a-4b5c6d7e8f90"
	dir := filepath.Join(root, "4242")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// cgroup v1 lists every hierarchy; the pod is named in the later lines.
	body := "13:misc:/\n12:memory:/kubepods/burstable/pod" + uid + "/abc\n0::/\n"
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, ok := PodOfPID(root, 4242); !ok || got != uid {
		t.Errorf("PodOfPID = %q, %v; want %q", got, ok, uid)
	}
	if _, _, ok := PodOfPID(root, 1); ok {
		t.Errorf("PodOfPID of a missing process succeeded")
	}
}
