package extender

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// The Lease's settings (kube-scheduler's defaults): a replica that finds the Lease held by another identity
// takes it LeaseDuration after it first saw it unchanged, checking every RetryPeriod.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// Leader runs leader election on a Lease so that, with several replicas, exactly one binds.
type Leader struct {
	leading atomic.Bool
}

// IsLeader reports whether this replica holds the Lease.
func (l *Leader) IsLeader() bool { return l.leading.Load() }

// Run campaigns for the Lease namespace/name until ctx ends.
func (l *Leader) Run(ctx context.Context, cs kubernetes.Interface, namespace, name, identity string, log *slog.Logger) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: LeaseDuration, RenewDeadline: RenewDeadline, RetryPeriod: RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { l.leading.Store(true); log.Info("leading", "lease", namespace+"/"+name) },
			OnStoppedLeading: func() { l.leading.Store(false); log.Info("stopped leading", "lease", namespace+"/"+name) },
		},
	})
}
