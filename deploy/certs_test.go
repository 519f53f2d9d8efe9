package deploy_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExtenderCertsScript runs hack/extender-certs.sh and checks what it made: a serving certificate for the
// Service's names and 127.0.0.1, and kube-scheduler's client certificate, both signed by the CA.
func TestExtenderCertsScript(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "hack", "extender-certs.sh"), "--namespace", "gpu-system", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("extender-certs.sh: %v\n%s", err, b)
	}
	read := func(name string) *x509.Certificate {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(b)
		if block == nil {
			t.Fatalf("%s: no PEM", name)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return c
	}
	roots := x509.NewCertPool()
	roots.AddCert(read("ca.crt"))
	server, client := read("server.crt"), read("scheduler-client.crt")
	for _, name := range []string{"kubectl-hami-extender.gpu-system.svc", "127.0.0.1"} {
		if _, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if client.Subject.CommonName != schedulerClientCN {
		t.Errorf("client certificate CN %q, want %s", client.Subject.CommonName, schedulerClientCN)
	}
	if _, err := server.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the serving certificate also works as a client certificate")
	}
}
