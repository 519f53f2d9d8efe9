package deviceplugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// The environment of HAMi-core's contract (what libvgpu.so reads inside the container).
const (
	EnvVisibleDevices      = "NVIDIA_VISIBLE_DEVICES"
	EnvMemoryLimitPrefix   = "CUDA_DEVICE_MEMORY_LIMIT_"
	EnvSMLimit             = "CUDA_DEVICE_SM_LIMIT"
	EnvMemorySharedCache   = "CUDA_DEVICE_MEMORY_SHARED_CACHE"
	EnvOversubscribe       = "CUDA_OVERSUBSCRIBE"
	EnvDisableControl      = "CUDA_DISABLE_CONTROL" // set on a container by its owner: no ld.so.preload
	libraryFile            = "libvgpu.so"
	preloadFile            = "ld.so.preload"
	containerHamiCoreDir   = "/usr/local/vgpu" // ld.so.preload names /usr/local/vgpu/libvgpu.so
	containerPreloadPath   = "/etc/ld.so.preload"
	containerLockDir       = "/tmp/vgpulock"
	hostContainersSubdir   = "containers" // <HamiCoreDir>/containers/<pod uid>_<container>: HAMi's monitor looks there
	hostLockSubdir         = "vgpulock"
	cacheDirPermissions    = 0o777 // the container's user is unknown; HAMi-core must write there
	fallbackCacheDirectory = "/tmp"
)

// containerResponse is what the container gets: HAMi-core's environment for the entry's GPUs, and HAMi-core's
// mounts when the library is on the host. ctr may be nil when the entry cannot be matched to a container.
func (p *Plugin) containerResponse(pod *corev1.Pod, ctr *corev1.Container, entry int, devs codec.ContainerDevices) *pluginapi.ContainerAllocateResponse {
	uuids := make([]string, len(devs))
	env := map[string]string{}
	for i, d := range devs {
		uuids[i] = d.UUID
		env[EnvMemoryLimitPrefix+strconv.Itoa(i)] = strconv.FormatInt(d.UsedMem, 10) + "m"
	}
	env[EnvVisibleDevices] = strings.Join(uuids, ",")
	// The scheduler gives every GPU of a container the same cores; HAMi-core takes one limit.
	env[EnvSMLimit] = strconv.FormatInt(devs[0].UsedCores, 10)
	if p.src.MemoryScaling() > 1 {
		env[EnvOversubscribe] = "true"
	}

	name := "entry-" + strconv.Itoa(entry)
	if ctr != nil {
		name = ctr.Name
	}
	cacheName := string(pod.UID) + "_" + name
	resp := &pluginapi.ContainerAllocateResponse{Envs: env}
	env[EnvMemorySharedCache] = filepath.Join(fallbackCacheDirectory, cacheName+".cache")

	lib := filepath.Join(p.opts.HamiCoreDir, libraryFile)
	if _, err := os.Stat(lib); err != nil {
		p.log.Warn("HAMi-core is not on this node: the container gets its limits as environment but nothing enforces them",
			"library", lib, "pod", pod.Namespace+"/"+pod.Name, "container", name, "err", err)
		return resp
	}
	if dir, err := makeSharedDir(filepath.Join(p.opts.HamiCoreDir, hostContainersSubdir, cacheName)); err != nil {
		p.log.Warn("cannot create the container's HAMi-core cache folder; the cache stays inside the container",
			"pod", pod.Namespace+"/"+pod.Name, "container", name, "err", err)
	} else {
		resp.Mounts = append(resp.Mounts, &pluginapi.Mount{ContainerPath: containerHamiCoreDir, HostPath: dir})
		env[EnvMemorySharedCache] = filepath.Join(containerHamiCoreDir, cacheName+".cache")
	}
	resp.Mounts = append(resp.Mounts, &pluginapi.Mount{ContainerPath: filepath.Join(containerHamiCoreDir, libraryFile), HostPath: lib, ReadOnly: true})
	if dir, err := makeSharedDir(filepath.Join(p.opts.HamiCoreDir, hostLockSubdir)); err != nil {
		p.log.Warn("cannot create HAMi-core's lock folder", "err", err)
	} else {
		resp.Mounts = append(resp.Mounts, &pluginapi.Mount{ContainerPath: containerLockDir, HostPath: dir})
	}
	preload := filepath.Join(p.opts.HamiCoreDir, preloadFile)
	switch _, err := os.Stat(preload); {
	case ctr != nil && hasEnv(ctr, EnvDisableControl):
		p.log.Info("the container sets "+EnvDisableControl+": HAMi-core is not preloaded", "pod", pod.Namespace+"/"+pod.Name, "container", name)
	case err != nil:
		p.log.Warn("HAMi-core's ld.so.preload is not on this node: libvgpu.so is mounted but not preloaded", "file", preload, "err", err)
	default:
		resp.Mounts = append(resp.Mounts, &pluginapi.Mount{ContainerPath: containerPreloadPath, HostPath: preload, ReadOnly: true})
	}
	return resp
}

// makeSharedDir creates dir writable by any user (HAMi-core runs as the container's user).
func makeSharedDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, cacheDirPermissions); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	// MkdirAll applies the umask.
	if err := os.Chmod(dir, cacheDirPermissions); err != nil {
		return "", err
	}
	return dir, nil
}

func hasEnv(c *corev1.Container, name string) bool {
	for _, e := range c.Env {
		if e.Name == name {
			return true
		}
	}
	return false
}

// entryContainer is the container that entry i of the annotation belongs to, nil when unknown. HAMi v2.9+ writes
// entries for init then app containers, older versions for app containers only; when the count fits neither (v2.10
// drops empty entries on some nodes), the entries with GPUs map onto the containers asking for the resource.
func entryContainer(pod *corev1.Pod, pd codec.PodDevices, i int, resource string) *corev1.Container {
	all := make([]*corev1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for j := range pod.Spec.InitContainers {
		all = append(all, &pod.Spec.InitContainers[j])
	}
	for j := range pod.Spec.Containers {
		all = append(all, &pod.Spec.Containers[j])
	}
	apps := all[len(pod.Spec.InitContainers):]
	switch {
	case i < 0 || i >= len(pd):
		return nil
	case len(pd) == len(all):
		return all[i]
	case len(pd) == len(apps):
		return apps[i]
	}
	nth := 0
	for j := range i {
		if len(pd[j]) > 0 {
			nth++
		}
	}
	for _, c := range all {
		if asksFor(c, resource) {
			if nth == 0 {
				return c
			}
			nth--
		}
	}
	return nil
}

func asksFor(c *corev1.Container, resource string) bool {
	q, ok := c.Resources.Limits[corev1.ResourceName(resource)]
	if !ok {
		q, ok = c.Resources.Requests[corev1.ResourceName(resource)]
	}
	return ok && !q.IsZero()
}

// checkDevices refuses GPUs this node does not register, and entries that mix GPUs in MIG mode with others; it
// reports whether the entry's GPUs are in MIG mode.
func checkDevices(devs codec.ContainerDevices, registered []codec.DeviceInfo) (mig bool, err error) {
	for n, d := range devs {
		i := slicesIndex(registered, d.UUID)
		if i < 0 {
			return false, fmt.Errorf("GPU %s of %s is not a GPU of this node", d.UUID, codec.PodToAllocateAnnotation)
		}
		isMig := registered[i].Mode == agent.ModeMIG
		if n > 0 && isMig != mig {
			return false, fmt.Errorf("the entry mixes GPUs in MIG mode and GPUs that are not (%s is %s)", d.UUID, registered[i].Mode)
		}
		mig = isMig
	}
	return mig, nil
}

func slicesIndex(devs []codec.DeviceInfo, uuid string) int {
	for i := range devs {
		if devs[i].ID == uuid {
			return i
		}
	}
	return -1
}
