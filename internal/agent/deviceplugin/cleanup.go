package deviceplugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Folders under <HamiCoreDir>/containers outlive their pods: HAMi's own device plugin DaemonSet runs a monitor
// that removes them, and the full replacement has none. The plugin sweeps them itself.
const (
	cleanupInterval = 5 * time.Minute
	// cleanupGrace spares folders this young: a container being allocated has a folder before its pod shows
	// up in a list of this node's pods that may lag.
	cleanupGrace = 10 * time.Minute
)

// cleanupLoop sweeps stale container folders until ctx ends.
func (p *Plugin) cleanupLoop(ctx context.Context) {
	t := time.NewTicker(cleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := p.sweepContainerDirs(ctx, time.Now()); err != nil {
				p.log.Warn("cannot sweep HAMi-core container folders", "err", err)
			} else if n > 0 {
				p.log.Info("removed HAMi-core folders of deleted pods", "count", n)
			}
		}
	}
}

// sweepContainerDirs removes the folders <uid>_<container> of pods no longer on this node, older than the
// grace; it returns how many it removed. Nothing is removed when this node's pods cannot be listed.
func (p *Plugin) sweepContainerDirs(ctx context.Context, now time.Time) (int, error) {
	dir := filepath.Join(p.opts.HamiCoreDir, hostContainersSubdir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	if len(entries) == 0 {
		return 0, nil
	}
	list, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + p.opts.NodeName})
	if err != nil {
		return 0, err
	}
	live := map[string]bool{}
	for i := range list.Items {
		live[string(list.Items[i].UID)] = true
	}
	removed := 0
	for _, e := range entries {
		uid, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !e.IsDir() || live[uid] {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < cleanupGrace {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			p.log.Warn("cannot remove a HAMi-core container folder", "folder", e.Name(), "err", err)
			continue
		}
		removed++
	}
	return removed, nil
}
