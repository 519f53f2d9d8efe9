package deploy_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
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
	if m := read("metrics-client.crt"); m.Subject.CommonName != "kubectl-hami-metrics" {
		t.Errorf("metrics client certificate CN %q", m.Subject.CommonName)
	} else if _, err := m.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("metrics client certificate: %v", err)
	}
	api := read("apiserver-webhook-client.crt")
	if api.Subject.CommonName != "kube-apiserver" { // serve-extender's --webhook-client-allowed-cn default
		t.Errorf("the API server's webhook client certificate has CN %q, want kube-apiserver", api.Subject.CommonName)
	}
	if _, err := api.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the API server's webhook client certificate: %v", err)
	}
	// The kubeconfig names the webhook's Service as the API server calls it, and the admission configuration
	// points at the kubeconfig.
	kc, err := clientcmd.LoadFromFile(filepath.Join(out, "webhook-kubeconfig.yaml"))
	if err != nil {
		t.Fatalf("webhook-kubeconfig.yaml: %v", err)
	}
	user, ok := kc.AuthInfos["kubectl-hami-extender.gpu-system.svc:443"]
	if !ok || user.ClientCertificate != "/etc/kubernetes/kubectl-hami/apiserver-webhook-client.crt" {
		t.Errorf("webhook-kubeconfig.yaml users: %v, want kubectl-hami-extender.gpu-system.svc:443 with the client certificate", kc.AuthInfos)
	}
	adm, err := os.ReadFile(filepath.Join(out, "admission-config.yaml"))
	if err != nil || !strings.Contains(string(adm), "kubeConfigFile: /etc/kubernetes/kubectl-hami/webhook-kubeconfig.yaml") ||
		!strings.Contains(string(adm), "name: MutatingAdmissionWebhook") {
		t.Errorf("admission-config.yaml: %v\n%s", err, adm)
	}
}
