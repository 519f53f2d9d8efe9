package extender

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// ServeConfig says where the server listens and whom it serves.
type ServeConfig struct {
	// Addr serves the scheduler verbs, /metrics, /healthz and /readyz (and /webhook when WebhookAddr is empty).
	Addr string
	// CertFile and KeyFile turn on TLS (both listeners use them).
	CertFile, KeyFile string
	// ClientCAFile, when set, makes /filter, /prioritize and /bind answer only clients that present a
	// certificate signed by it (kube-scheduler's extenders[].tlsConfig.certFile); others get 401, or 403 when
	// AllowedCNs is set and the certificate's common name is not in it. Requires TLS.
	ClientCAFile string
	AllowedCNs   []string
	// WebhookAddr, when set, serves /webhook on its own TLS listener for the API server; the main listener
	// then answers /webhook with 403. WebhookClientCAFile optionally requires a client certificate there
	// (the API server's, configured through its AdmissionConfiguration kubeconfig).
	WebhookAddr         string
	WebhookClientCAFile string
	// WebhookAllowedCNs, with WebhookClientCAFile, are the common names the API server's client certificate may
	// have (403 otherwise): the CA alone would also let kube-scheduler's certificate, or any other the CA signed,
	// call the webhook. Empty means DefaultWebhookClientCN.
	WebhookAllowedCNs []string
	// MetricsAllowedCNs, with ClientCAFile, are the common names that may read /metrics; empty means any
	// certificate the client CA signed. Without ClientCAFile /metrics is open (as every endpoint is).
	MetricsAllowedCNs []string
}

// DefaultWebhookClientCN is the common name of the API server's client certificate for the webhook, as
// hack/extender-certs.sh issues it.
const DefaultWebhookClientCN = "kube-apiserver"

func (c ServeConfig) webhookCNs() []string {
	if len(c.WebhookAllowedCNs) == 0 {
		return []string{DefaultWebhookClientCN}
	}
	return c.WebhookAllowedCNs
}

// Validate checks the combinations.
func (c ServeConfig) Validate() error {
	tlsOn := c.CertFile != "" && c.KeyFile != ""
	switch {
	case (c.CertFile == "") != (c.KeyFile == ""):
		return fmt.Errorf("the TLS certificate and key go together")
	case c.ClientCAFile != "" && !tlsOn:
		return fmt.Errorf("client certificates (%s) need TLS: set the serving certificate and key", c.ClientCAFile)
	case len(c.AllowedCNs) > 0 && c.ClientCAFile == "":
		return fmt.Errorf("allowed client common names need a client CA file")
	case c.WebhookAddr != "" && !tlsOn:
		return fmt.Errorf("the webhook listener %s needs TLS: set the serving certificate and key", c.WebhookAddr)
	case c.WebhookClientCAFile != "" && c.WebhookAddr == "":
		return fmt.Errorf("a webhook client CA needs the webhook listener")
	case len(c.MetricsAllowedCNs) > 0 && c.ClientCAFile == "":
		return fmt.Errorf("common names allowed to read /metrics need a client CA file")
	case c.WebhookAddr != "" && c.WebhookAddr == c.Addr:
		return fmt.Errorf("the webhook listener %s is the main listener's address", c.WebhookAddr)
	}
	return nil
}

// Unauthenticated reports whether anyone who reaches the main listener may call the scheduler verbs.
func (c ServeConfig) Unauthenticated() bool { return c.ClientCAFile == "" }

// loadPool reads a PEM bundle of CA certificates.
func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("client CA %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// clientAuth wraps a verb so that only a client with a verified certificate (and an allowed common name)
// reaches it. The TLS layer verified the chain (VerifyClientCertIfGiven), so a verified chain here means a
// certificate signed by the client CA.
func clientAuth(allowed []string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
			w.Header().Set("WWW-Authenticate", `Mutual realm="kubectl-hami-extender"`)
			http.Error(w, "a client certificate signed by the extender's client CA is required", http.StatusUnauthorized)
			return
		}
		cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if len(allowed) > 0 && !slices.Contains(allowed, cn) {
			http.Error(w, fmt.Sprintf("client certificate CN %q is not allowed for %s (allowed: %s)", cn, r.URL.Path, strings.Join(allowed, ", ")), http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// warnRefused logs, at most once a minute, that the webhook refused a caller: with failurePolicy Ignore the
// API server then admits GPU pods unmutated, which nobody would notice otherwise.
func (s *Server) warnRefused(h http.HandlerFunc) http.HandlerFunc {
	var last atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h(rec, r)
		if rec.status == http.StatusUnauthorized || rec.status == http.StatusForbidden {
			now := time.Now().Unix()
			if prev := last.Load(); now-prev >= 60 && last.CompareAndSwap(prev, now) {
				cn := ""
				if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
					cn = r.TLS.VerifiedChains[0][0].Subject.CommonName
				}
				s.log.Warn("refused a /webhook call without the API server's client certificate: if it was the API server, "+
					"GPU pods are admitted unmutated (failurePolicy Ignore); give it the certificate through its AdmissionConfiguration "+
					"(hack/extender-certs.sh), set --webhook-client-allowed-cn to its common name, or deploy deploy/extender-open-webhook "+
					"(docs/deploy.md, Security)", "from", r.RemoteAddr, "cn", cn)
			}
		}
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// forbidden answers 403 with a reason.
func forbidden(reason string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, reason, http.StatusForbidden) }
}

// handlers builds the main listener's and the webhook listener's (nil when there is none) routes.
func (s *Server) handlers(c ServeConfig) (main, webhook http.Handler) {
	guard := func(h http.HandlerFunc) http.HandlerFunc { return h }
	if c.ClientCAFile != "" {
		guard = func(h http.HandlerFunc) http.HandlerFunc { return clientAuth(c.AllowedCNs, h) }
	}
	hook := guard(s.timed("webhook", s.webhookBodyLimit, s.handleWebhook))
	if c.WebhookAddr != "" {
		hook = forbidden("the webhook is served on its own listener " + c.WebhookAddr)
		whook := s.timed("webhook", s.webhookBodyLimit, s.handleWebhook)
		if c.WebhookClientCAFile != "" {
			whook = s.warnRefused(clientAuth(c.webhookCNs(), whook))
		}
		mux := http.NewServeMux()
		mux.HandleFunc("POST /webhook", whook)
		mux.HandleFunc("GET /healthz", s.healthz)
		webhook = mux
	}
	metrics := func(h http.HandlerFunc) http.HandlerFunc { return h }
	if c.ClientCAFile != "" {
		metrics = func(h http.HandlerFunc) http.HandlerFunc { return clientAuth(c.MetricsAllowedCNs, h) }
	}
	return s.routesWith(guard, hook, metrics), webhook
}

// tlsConfig is the server side of one listener; a client CA asks for (and verifies) client certificates
// without requiring them, so that probes and metrics scrapers need none.
func tlsConfig(clientCA string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if clientCA != "" {
		pool, err := loadPool(clientCA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

func newHTTPServer(addr string, h http.Handler, tc *tls.Config) *http.Server {
	return &http.Server{Addr: addr, Handler: h, TLSConfig: tc, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
}

// ServeWith listens as the configuration says until ctx ends.
func (s *Server) ServeWith(ctx context.Context, c ServeConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	mainH, hookH := s.handlers(c)
	mainTLS, err := tlsConfig(c.ClientCAFile)
	if err != nil {
		return err
	}
	servers := []*http.Server{newHTTPServer(c.Addr, mainH, mainTLS)}
	if hookH != nil {
		hookTLS, err := tlsConfig(c.WebhookClientCAFile)
		if err != nil {
			return err
		}
		servers = append(servers, newHTTPServer(c.WebhookAddr, hookH, hookTLS))
	}
	errc := make(chan error, len(servers))
	for _, srv := range servers {
		go func() {
			var err error
			if c.CertFile != "" {
				err = srv.ListenAndServeTLS(c.CertFile, c.KeyFile)
			} else {
				err = srv.ListenAndServe()
			}
			errc <- fmt.Errorf("listener %s: %w", srv.Addr, err)
		}()
	}
	var first error
	select {
	case first = <-errc:
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shut); err != nil && first == nil {
			first = err
		}
	}
	// No bind runs any more: give back the node locks still held, so that the next leader need not wait.
	s.releaseHeldLocks(shut)
	if errors.Is(first, http.ErrServerClosed) {
		return nil
	}
	return first
}
