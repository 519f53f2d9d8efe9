package engine

// The request reader's loop: each container asked of every device type in Config.Kinds order, each type's
// request read by its family's reader (device.Kind.ReadRequest, internal/device/<family>).

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// podReading reads one pod's containers: the family readers' view of the container being read and the
// problems found, one allocation per pod (the readers are func values, so what they are given escapes).
type podReading struct {
	device.Reading
	object string
	probs  []Problem
}

// Report records a problem of the pod.
func (p *podReading) Report(field, format string, args ...any) {
	p.probs = append(p.probs, Problem{Kind: "Pod", Object: p.object, Field: field, Message: fmt.Sprintf(format, args...)})
}

// anyRequest reads a container's request for the first device type it asks for (HAMi turns each container
// into one request per type; a container asking for two types is a mistake, reported, of which the first is
// kept).
func (p *podReading) anyRequest(c *corev1.Container, kinds []device.Kind, path string) (ContainerRequest, bool) {
	p.C, p.Path = c, path
	r := &p.Reading
	var cr ContainerRequest
	ok := false
	for i := range kinds {
		k := &kinds[i]
		read, asks, _, _, _ := k.Readers()
		if !asks(k, r) {
			continue
		}
		if ok {
			first := kinds[cr.Kind].Count
			p.Report(fmt.Sprintf("%s[%s].resources", path, c.Name), "asks for %s and %s; HAMi does not give one container two device types: only the %s is considered",
				first, k.Count, first)
			continue
		}
		a, asked := read(k, r)
		if !asked {
			continue
		}
		cr, ok = containerRequestOf(c.Name, a, k, i), true
	}
	return cr, ok
}

// containerRequestOf is the engine's record of a family reader's answer.
func containerRequestOf(name string, a device.Ask, k *device.Kind, kind int) ContainerRequest {
	cr := ContainerRequest{Name: name, Count: a.Count, MemoryMiB: a.MemoryMiB, MemoryPercent: a.MemoryPercent,
		MemoryDefaulted: a.MemoryDefaulted, Cores: a.Cores, CoresOfDevice: a.CoresOfDevice, Template: a.Template,
		ByCores: a.ByCores, webhookCores: a.WebhookCores, deviceCores: a.DeviceCores, coresUnit: k.CoresUnit, slots: a.Slots, profile: a.Profile, Kind: kind}
	if !mainKind(k) {
		cr.Device, cr.Word = k.Name, k.Word
	}
	cr.webhookMemory = a.WebhookMemory
	return cr
}
