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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// Options tune the server.
type Options struct {
	// SchedulerName is the profile the webhook points GPU pods at.
	SchedulerName string
	// ReleaseLockAfterBind releases hami.io/mutex.lock as soon as the pod is bound. HAMi's own device plugin
	// releases it after Allocate; without one (tests, or nodes that never consume it) the lock would stall
	// the node for its 5-minute expiry.
	ReleaseLockAfterBind bool
	// MaxBodyBytes bounds a request body (kube-scheduler sends every candidate node without a node cache).
	MaxBodyBytes int64
	// EventInterval is the least time between two pending-reason events for one pod.
	EventInterval time.Duration
	// IsLeader says whether this replica may bind; nil means always.
	IsLeader func() bool
}

// DefaultOptions are the defaults of `kubectl hami serve-extender`.
func DefaultOptions() Options {
	return Options{SchedulerName: "hami-scheduler", MaxBodyBytes: 64 << 20, EventInterval: time.Minute}
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
	// nodeTurns holds a *sync.Mutex per node name: binds to one node take turns.
	nodeTurns sync.Map
	// recent is the last filter verdict, which the prioritize call that follows may reuse.
	recent recentVerdict
	// nodeWrites holds, per node name, the resourceVersion and lock of this extender's last lock write
	// (a small *corev1.Node); writes counts them, to prune now and then.
	nodeWrites sync.Map
	writes     atomic.Int64
}

// NewServer builds a server over the state. client is used by bind and for events.
func NewServer(state *State, client kubernetes.Interface, opts Options, log *slog.Logger, now func() time.Time) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultOptions().MaxBodyBytes
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Server{state: state, client: client, opts: opts, log: log, now: now,
		metrics: NewMetrics(state), events: newEventLimiter(opts.EventInterval)}
}

// Handler routes the extender's endpoints, with no client authentication.
func (s *Server) Handler() http.Handler {
	open := func(h http.HandlerFunc) http.HandlerFunc { return h }
	return s.routes(open, s.timed("webhook", s.handleWebhook))
}

// routes builds the main listener's mux: guard wraps the scheduler verbs, webhook serves POST /webhook.
// /healthz, /readyz and /metrics stay open.
func (s *Server) routes(guard func(http.HandlerFunc) http.HandlerFunc, webhook http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /filter", guard(s.timed("filter", s.handleFilter)))
	mux.HandleFunc("POST /prioritize", guard(s.timed("prioritize", s.handlePrioritize)))
	mux.HandleFunc("POST /bind", guard(s.timed("bind", s.handleBind)))
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
	mux.Handle("GET /metrics", s.metrics.Handler())
	return mux
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

// timed records the latency of a verb.
func (s *Server) timed(verb string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		h(w, r)
		s.metrics.observe(verb, time.Since(start))
	}
}

// decode reads a JSON body into v, answering 400 (or 413) itself on failure.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(r.Body)
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

// evaluate runs the engine under the state's read lock.
func (s *Server) evaluate(pod *corev1.Pod, opts engine.EvalOptions) *engine.Verdict {
	var v *engine.Verdict
	s.state.Read(func(c *engine.Cluster) { v = c.Evaluate(pod, opts) })
	return v
}

// Serve listens on one address until ctx ends, with TLS when certFile and keyFile are set, and no client
// authentication; ServeWith has the options.
func (s *Server) Serve(ctx context.Context, addr, certFile, keyFile string) error {
	return s.ServeWith(ctx, ServeConfig{Addr: addr, CertFile: certFile, KeyFile: keyFile})
}
