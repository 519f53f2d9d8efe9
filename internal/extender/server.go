package extender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/client-go/kubernetes"
)

// Options tune the server.
type Options struct {
	// SchedulerName is the profile the webhook points GPU pods at.
	SchedulerName string
	// ReleaseLockAfterBind releases hami.io/mutex.lock as soon as the pod is bound. HAMi's own device plugin
	// releases it after Allocate; without one (tests, or nodes that never consume it) the lock would stall
	// the node for its 5-minute expiry.
	ReleaseLockAfterBind bool
	// LockHold is, with ReleaseLockAfterBind, how long the node lock stays after the last bind to the node
	// ended: a bind that comes meanwhile needs no lock write, so a burst writes the lock once per node, not
	// twice per pod (node writes also wake every pending pod in kube-scheduler). 0 releases at once.
	LockHold time.Duration
	// MaxBodyBytes bounds the body of a scheduler verb (filter, prioritize, bind); 0 sizes it from the cluster:
	// one pod (3 MiB, the API server's own limit) plus twice the node count times the longest node name and
	// its JSON punctuation (kube-scheduler with nodeCacheCapable sends node names only). Set it when
	// kube-scheduler sends whole Node objects (nodeCacheCapable: false). /webhook takes at most 3 MiB.
	MaxBodyBytes int64
	// EventInterval is the least time between two pending-reason events for one pod.
	EventInterval time.Duration
	// IsLeader says whether this replica may bind; nil means always.
	IsLeader func() bool
	// LeaderWait is how long a bind that reaches a replica not (yet) leading waits for it to lead before it
	// fails: a replacement for a leader killed without releasing its Lease leads once the Lease expires, at
	// about the time its kube-scheduler (on a Lease of the same settings) starts sending binds; a bind failed
	// meanwhile would put the pod in kube-scheduler's backoff (up to 10 s). 0 fails at once.
	LeaderWait time.Duration
	// BindTimeout bounds a bind's own API calls; a placement or lock of an unbound pod that no bind here works
	// on is abandoned after it (the janitor takes it back, and other binds take the lock over).
	BindTimeout time.Duration
	// RollbackTimeout bounds the rollback of a failed bind, retried until done on a context of its own.
	RollbackTimeout time.Duration
	// DisablePreemption makes the preempt verb return kube-scheduler's candidates unchanged (preempt.go), and
	// the extender preempt for no pod itself (preemptor.go).
	DisablePreemption bool
	// PreemptionDelay is how long after a failed filter the extender preempts for the pod itself (preemptor.go).
	PreemptionDelay time.Duration
	// EventClient writes the pending-reason events, on an API budget of its own so that events never delay a
	// bind; nil uses the bind client.
	EventClient kubernetes.Interface
}

// API client budgets of serve-extender (--kube-api-qps, --kube-api-burst): a bind takes three or four API
// calls, so 500 requests/s binds well over 100 pods/s; events have a budget of their own.
const (
	DefaultKubeAPIQPS   = 500
	DefaultKubeAPIBurst = 1000
	EventQPS            = 20
	EventBurst          = 40
	// WebhookMaxBodyBytes is the API server's own request limit (3 MiB): an AdmissionReview is never larger.
	WebhookMaxBodyBytes = 3 << 20
)

// DefaultOptions are the defaults of `kubectl hami serve-extender`.
func DefaultOptions() Options {
	return Options{SchedulerName: "hami-scheduler", EventInterval: time.Minute, BindTimeout: 10 * time.Second, RollbackTimeout: 5 * time.Minute,
		LockHold: 500 * time.Millisecond, LeaderWait: LeaseDuration + RetryPeriod + time.Second, PreemptionDelay: DefaultPreemptionDelay}
}

// Server answers kube-scheduler's extender calls and HAMi's admission webhook.
type Server struct {
	state   *State
	client  kubernetes.Interface
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics
	events  *eventLimiter
	// nodeTurns holds a *turn per node name: binds to one node take turns.
	nodeTurns sync.Map
	// leftLocks holds, per node, a shared lock this process wrote whose release has not been seen to succeed.
	leftLocks sync.Map
	// bindingLabelsOK says whether Bindings carry labels onto the pod (see bindingLabels).
	bindingLabelsOnce sync.Once
	bindingLabelsOK   bool
	// recent is the last filter verdict, which the prioritize call that follows may reuse.
	recent recentVerdict
	// nodeWrites holds, per node name, the resourceVersion and lock of this extender's last lock write
	// (a small *corev1.Node); writes counts them, to prune now and then.
	nodeWrites sync.Map
	writes     atomic.Int64
	// flights holds a *bindFlight per pod namespace/name being bound (or rolled back, or swept).
	flights sync.Map
	// futureLocks holds a lockSeen per node whose lock is dated in the future.
	futureLocks sync.Map
	// eventSlots bounds the event writes in flight: one more is dropped, never queued.
	eventSlots chan struct{}
	// preemptor queues the pods that fit nowhere for the extender's own preemption (preemptor.go).
	preemptor *preemptor
}

// NewServer builds a server over the state. client is used by bind and for events.
func NewServer(state *State, client kubernetes.Interface, opts Options, log *slog.Logger, now func() time.Time) *Server {
	d := DefaultOptions()
	if opts.BindTimeout <= 0 {
		opts.BindTimeout = d.BindTimeout
	}
	if opts.RollbackTimeout <= 0 {
		opts.RollbackTimeout = d.RollbackTimeout
	}
	if opts.EventClient == nil {
		opts.EventClient = client
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{state: state, client: client, opts: opts, log: log, now: now,
		metrics: NewMetrics(state), events: newEventLimiter(opts.EventInterval), eventSlots: make(chan struct{}, 16), preemptor: newPreemptor()}
}

// Handler routes the extender's endpoints, with no client authentication.
func (s *Server) Handler() http.Handler {
	open := func(h http.HandlerFunc) http.HandlerFunc { return h }
	return s.routes(open, s.timed("webhook", s.webhookBodyLimit, s.handleWebhook))
}

// routes builds the main listener's mux: guard wraps the scheduler verbs, webhook serves POST /webhook.
// /healthz, /readyz and /metrics stay open.
func (s *Server) routes(guard func(http.HandlerFunc) http.HandlerFunc, webhook http.HandlerFunc) http.Handler {
	return s.routesWith(guard, webhook, func(h http.HandlerFunc) http.HandlerFunc { return h })
}

// routesWith is routes with metricsGuard around /metrics; /healthz and /readyz stay open (kubelet's probes
// present no certificate).
func (s *Server) routesWith(guard func(http.HandlerFunc) http.HandlerFunc, webhook http.HandlerFunc, metricsGuard func(http.HandlerFunc) http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /filter", guard(s.timed("filter", s.schedulerBodyLimit, s.handleFilter)))
	mux.HandleFunc("POST /prioritize", guard(s.timed("prioritize", s.schedulerBodyLimit, s.handlePrioritize)))
	mux.HandleFunc("POST /bind", guard(s.timed("bind", s.schedulerBodyLimit, s.handleBind)))
	mux.HandleFunc("POST /preempt", guard(s.timed("preempt", s.preemptBodyLimit, s.handlePreempt)))
	mux.HandleFunc("POST /webhook", webhook)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.state.Synced() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		if s.opts.IsLeader != nil && !s.opts.IsLeader() {
			http.Error(w, "not the leader", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /metrics", metricsGuard(s.metrics.Handler().ServeHTTP))
	return mux
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

// timed bounds the body of a verb and records its latency.
func (s *Server) timed(verb string, limit func() int64, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		max := limit()
		if r.ContentLength > max {
			http.Error(w, fmt.Sprintf("the request body of %d bytes is over the limit of %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			s.metrics.observe(verb, time.Since(start))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		h(w, r)
		s.metrics.observe(verb, time.Since(start))
	}
}

// podBodyBytes is what a scheduler verb's body may spend on the pod: the API server's request limit.
const podBodyBytes = 3 << 20

// schedulerBodyLimit is MaxBodyBytes, or when it is 0 one pod plus twice (headroom for nodes joining) the
// node count times the longest node name with its quotes and comma.
func (s *Server) schedulerBodyLimit() int64 {
	if s.opts.MaxBodyBytes > 0 {
		return s.opts.MaxBodyBytes
	}
	nodes, longest := s.state.NodeStats()
	return podBodyBytes + 2*int64(nodes+16)*int64(longest+4)
}

// preemptBodyLimit is MaxBodyBytes, or the scheduler verbs' limit plus room for the victims' UIDs: up to
// kube-scheduler's candidate nodes (10 % of the nodes, at least 100) with a few hundred victims each.
func (s *Server) preemptBodyLimit() int64 {
	if s.opts.MaxBodyBytes > 0 {
		return s.opts.MaxBodyBytes
	}
	return s.schedulerBodyLimit() + 16<<20
}

// webhookBodyLimit is the API server's own limit, or MaxBodyBytes when that is smaller.
func (s *Server) webhookBodyLimit() int64 {
	if s.opts.MaxBodyBytes > 0 {
		return min(s.opts.MaxBodyBytes, WebhookMaxBodyBytes)
	}
	return WebhookMaxBodyBytes
}

// decode reads a JSON body into v, answering 400 (or 413) itself on failure. The body is read into one
// buffer of its announced length (bounded by the limit), so reading holds the body once.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= 64<<20 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	body := buf.Bytes()
	if err == nil {
		// json-iterator decodes kube-scheduler's thousands of node names several times faster than
		// encoding/json, with the same rules; it also refuses anything after the one JSON value, which
		// means a broken or forged request.
		if i := bytes.IndexByte(body, 0); i >= 0 {
			// A NUL byte is invalid anywhere in JSON; json-iterator would take one after the value for its end.
			err = fmt.Errorf("invalid character NUL at offset %d", i)
		} else if err = fastJSON.Unmarshal(body, v); err != nil && strings.Contains(err.Error(), "bytes left") {
			err = fmt.Errorf("unexpected data after the JSON value")
		}
	}
	if err != nil {
		status := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, fmt.Sprintf("cannot decode the request body: %v", err), status)
		return false
	}
	return true
}

// fastJSON is json-iterator configured exactly as encoding/json behaves.
var fastJSON = jsoniter.ConfigCompatibleWithStandardLibrary

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := fastJSON.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(append(b, '\n'))
}

// Serve listens on one address until ctx ends, with TLS when certFile and keyFile are set, and no client
// authentication; ServeWith has the options.
func (s *Server) Serve(ctx context.Context, addr, certFile, keyFile string) error {
	return s.ServeWith(ctx, ServeConfig{Addr: addr, CertFile: certFile, KeyFile: keyFile})
}
