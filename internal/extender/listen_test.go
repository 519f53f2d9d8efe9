package extender_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
)

// xtCA is a test certificate authority.
type xtCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newXTCA(t *testing.T, dir, name string) *xtCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &xtCA{cert: cert, key: key, file: filepath.Join(dir, name+".crt")}
	if err := os.WriteFile(ca.file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ca
}

// issue signs a certificate for cn (a server one when server is set) and writes cert and key files.
func (ca *xtCA) issue(t *testing.T, dir, cn string, server bool) (certFile, keyFile string, pair tls.Certificate) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pair, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pair
}

func xtFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestClientCertificatesGuardTheSchedulerVerbs serves with a client CA, an allowed CN and a webhook listener,
// then calls every endpoint with no certificate, the scheduler's, one with another CN and one from another CA.
func TestClientCertificatesGuardTheSchedulerVerbs(t *testing.T) {
	dir := t.TempDir()
	ca := newXTCA(t, dir, "extender-ca")
	serverCert, serverKey, _ := ca.issue(t, dir, "kubectl-hami-extender", true)
	_, _, scheduler := ca.issue(t, dir, "kubectl-hami-scheduler", false)
	_, _, otherCN := ca.issue(t, dir, "someone-else", false)
	stranger := newXTCA(t, dir, "stranger-ca")
	_, _, strangerCert := stranger.issue(t, dir, "kubectl-hami-scheduler-forged", false)
	apiCA := newXTCA(t, dir, "apiserver-ca")
	_, _, apiserver := apiCA.issue(t, dir, "kube-apiserver", false)
	_, _, apiOther := apiCA.issue(t, dir, "kubectl-hami-scheduler", false) // the webhook CA's, but not the API server's name

	state := extender.NewState(engine.DefaultConfig())
	state.SetSynced()
	srv := extender.NewServer(state, fake.NewClientset(), extender.Options{}, nil, time.Now)
	cfg := extender.ServeConfig{Addr: xtFreeAddr(t), CertFile: serverCert, KeyFile: serverKey, ClientCAFile: ca.file,
		AllowedCNs: []string{"kubectl-hami-scheduler"}, WebhookAddr: xtFreeAddr(t), WebhookClientCAFile: apiCA.file}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeWith(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeWith: %v", err)
		}
	})

	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	call := func(addr, method, path string, cert *tls.Certificate) (int, string, error) {
		tc := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
		req, _ := http.NewRequest(method, "https://"+addr+path, bytes.NewReader([]byte(`{}`)))
		res, err := c.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, res.Status)
		return res.StatusCode, b.String(), nil
	}
	// Wait for both listeners.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, err1 := call(cfg.Addr, "GET", "/healthz", nil)
		_, _, err2 := call(cfg.WebhookAddr, "GET", "/healthz", nil)
		if err1 == nil && err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listeners not up: %v, %v", err1, err2)
		}
		time.Sleep(50 * time.Millisecond)
	}

	for _, tc := range []struct {
		name, addr, method, path string
		cert                     *tls.Certificate
		want                     int
	}{
		{"no cert: filter", cfg.Addr, "POST", "/filter", nil, 401},
		{"no cert: prioritize", cfg.Addr, "POST", "/prioritize", nil, 401},
		{"no cert: bind", cfg.Addr, "POST", "/bind", nil, 401},
		{"no cert: webhook on the main listener", cfg.Addr, "POST", "/webhook", nil, 403},
		{"scheduler: webhook on the main listener", cfg.Addr, "POST", "/webhook", &scheduler, 403},
		{"no cert: healthz", cfg.Addr, "GET", "/healthz", nil, 200},
		{"no cert: readyz", cfg.Addr, "GET", "/readyz", nil, 200},
		{"no cert: metrics", cfg.Addr, "GET", "/metrics", nil, 401},
		{"scheduler: metrics", cfg.Addr, "GET", "/metrics", &scheduler, 200},
		{"other CN of the client CA: metrics", cfg.Addr, "GET", "/metrics", &otherCN, 200},
		{"another CA: metrics", cfg.Addr, "GET", "/metrics", &strangerCert, 401},
		{"scheduler: filter reaches the handler", cfg.Addr, "POST", "/filter", &scheduler, 200},
		// An empty bind reaches the handler, which refuses the missing pod name before any API call.
		{"scheduler: bind reaches the handler", cfg.Addr, "POST", "/bind", &scheduler, 400},
		{"other CN: filter", cfg.Addr, "POST", "/filter", &otherCN, 403},
		{"other CN: bind", cfg.Addr, "POST", "/bind", &otherCN, 403},
		// Go's client sends no certificate the server's CA list does not name; either way the call is refused.
		{"another CA: bind", cfg.Addr, "POST", "/bind", &strangerCert, 401},
		{"no cert: webhook listener", cfg.WebhookAddr, "POST", "/webhook", nil, 401},
		{"scheduler's cert: webhook listener", cfg.WebhookAddr, "POST", "/webhook", &scheduler, 401},
		{"API server: webhook listener reaches the handler", cfg.WebhookAddr, "POST", "/webhook", &apiserver, 400},
		{"the webhook CA's other name: webhook listener", cfg.WebhookAddr, "POST", "/webhook", &apiOther, 403},
		{"API server: no verbs on the webhook listener", cfg.WebhookAddr, "POST", "/bind", &apiserver, 404},
	} {
		code, status, err := call(tc.addr, tc.method, tc.path, tc.cert)
		switch {
		case err != nil:
			t.Errorf("%s: %v; want %d", tc.name, err, tc.want)
		case code != tc.want:
			t.Errorf("%s: %s; want %d", tc.name, status, tc.want)
		}
	}
}

func TestServeConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  extender.ServeConfig
		want string
	}{
		{extender.ServeConfig{Addr: ":1", ClientCAFile: "ca"}, "need TLS"},
		{extender.ServeConfig{Addr: ":1", CertFile: "c", KeyFile: "k", AllowedCNs: []string{"x"}}, "need a client CA"},
		{extender.ServeConfig{Addr: ":1", WebhookAddr: ":2"}, "needs TLS"},
		{extender.ServeConfig{Addr: ":1", CertFile: "c", KeyFile: "k", WebhookClientCAFile: "ca"}, "needs the webhook listener"},
		{extender.ServeConfig{Addr: ":1", CertFile: "c", KeyFile: "k", WebhookAddr: ":1"}, "main listener's address"},
		{extender.ServeConfig{Addr: ":1", CertFile: "c"}, "go together"},
		{extender.ServeConfig{Addr: ":1", CertFile: "c", KeyFile: "k", ClientCAFile: "ca", AllowedCNs: []string{"s"}, WebhookAddr: ":2"}, ""},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
