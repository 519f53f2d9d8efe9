package extender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// HandshakeStampInterval is how often HAMi's scheduler runs its registration pass (pkg/scheduler/
// scheduler.go:420 at v2.10.0), and so how often serve-extender stamps handshakes.
const HandshakeStampInterval = 15 * time.Second

// HAMi's registration pass stamps Requesting_<now> into a node's handshake whenever it lacks "Requesting"
// (CheckHealth, pkg/device/devices.go:597-613). The stamp starts the grace after which a node whose device
// plugin does not serve (allocatable nvidia.com/gpu 0) is dropped, and the engine judges a node by it. Without
// stamps a node that never had a serving device plugin would be judged forever; with them it is judged for the
// 60 s grace after serve-extender first sees it, as under HAMi. Only nodes with NVIDIA GPUs registered are
// stamped (HAMi stamps every node; the key means nothing to the others), and a dropped node's handshake is not
// removed again as HAMi's NodeCleanUp does (which restarts the grace at the next pass).

// needsStamp reports whether n registers NVIDIA GPUs and its handshake lacks the scheduler's stamp.
func needsStamp(n *corev1.Node) bool {
	return strings.TrimSpace(n.Annotations[codec.NodeRegisterAnnotation]) != "" &&
		!strings.Contains(n.Annotations[codec.NodeHandshakeAnnotation], codec.HandshakeRequesting)
}

// Unstamped lists the nodes waiting for a handshake stamp, sorted.
func (s *State) Unstamped() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.unstamped))
	for n := range s.unstamped {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// StampHandshakes writes Requesting_<now> into the handshake of every node that lacks it, as HAMi's
// registration pass does; a node gone or already stamped meanwhile is skipped. It returns how many it stamped.
func (s *Server) StampHandshakes(ctx context.Context) (int, error) {
	stamped := 0
	var errs []error
	for _, name := range s.state.Unstamped() {
		value := codec.FormatHandshakeRequesting(s.now())
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{codec.NodeHandshakeAnnotation: value}}})
		updated, err := s.client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s.state.RemoveNode(name)
		case err != nil:
			errs = append(errs, fmt.Errorf("node %s: cannot stamp %s: %w", name, codec.NodeHandshakeAnnotation, err))
		default:
			s.state.SetNode(updated)
			stamped++
		}
	}
	return stamped, errors.Join(errs...)
}

// RunHandshakeStamper stamps handshakes every interval until ctx ends; with leader election only the leader
// writes.
func (s *Server) RunHandshakeStamper(ctx context.Context, every time.Duration) {
	runEvery(ctx, every, func() {
		if s.opts.IsLeader != nil && !s.opts.IsLeader() {
			return
		}
		n, err := s.StampHandshakes(ctx)
		if err != nil {
			s.log.Warn("handshake stamps", "err", err)
		}
		if n > 0 {
			s.log.Info("stamped handshakes", "nodes", n, "annotation", codec.NodeHandshakeAnnotation)
		}
	})
}
