#!/usr/bin/env bash
# Makes the certificates serve-extender's deployment needs on a cluster without cert-manager (docs/deploy.md):
#   - a CA (ca.crt/ca.key), kept by you: it signs both certificates below and nothing else;
#   - the extender's serving certificate for its Service names and 127.0.0.1 (kube-scheduler calls it in the pod);
#   - kube-scheduler's client certificate, CN kubectl-hami-scheduler (serve-extender --client-allowed-cn);
#   - a client certificate for Prometheus, CN kubectl-hami-metrics (metrics-client.crt|key): /metrics answers only
#     certificates of the CA (serve-extender --client-ca-file; --metrics-allowed-cn narrows it);
#   - the API server's client certificate for the webhook, CN kube-apiserver (serve-extender
#     --webhook-client-ca-file and --webhook-client-allowed-cn), with the
#     AdmissionConfiguration and kubeconfig that make the API server present it (admission-config.yaml,
#     webhook-kubeconfig.yaml: copy them and the certificate to the control plane, see docs/deploy.md).
# With --apply it also creates the Secrets kubectl-hami-extender-tls and kubectl-hami-scheduler-client and puts
# the CA into the webhook's caBundle (run it after `kubectl apply -k deploy/extender`, or before and re-run).
#
#   bash hack/extender-certs.sh [--namespace kube-system] [--out DIR] [--days 825] [--apply]
set -euo pipefail

ns=kube-system
out=
days=825
apply=false
while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) ns=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --days) days=$2; shift 2 ;;
    --apply) apply=true; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "extender-certs: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v openssl >/dev/null || { echo "extender-certs: openssl is required" >&2; exit 1; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"
umask 077
svc=kubectl-hami-extender

if [ ! -s "$out/ca.key" ]; then
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$out/ca.key" -out "$out/ca.crt" \
    -days "$days" -subj "/CN=kubectl-hami-extender-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi

# issue NAME CN EXTFILE-CONTENT
issue() {
  local name=$1 cn=$2 ext=$3
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -keyout "$out/$name.key" -out "$out/$name.csr" \
    -subj "/CN=$cn" 2>/dev/null
  printf '%s\n' "$ext" > "$out/$name.ext"
  openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial -days "$days" \
    -out "$out/$name.crt" -extfile "$out/$name.ext" 2>/dev/null
  rm -f "$out/$name.csr" "$out/$name.ext"
}
issue server "$svc" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local,IP:127.0.0.1"
issue scheduler-client kubectl-hami-scheduler "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

issue apiserver-webhook-client kube-apiserver "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

issue metrics-client kubectl-hami-metrics "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

openssl verify -CAfile "$out/ca.crt" "$out/server.crt" "$out/scheduler-client.crt" "$out/apiserver-webhook-client.crt" \
  "$out/metrics-client.crt" >/dev/null

# The API server presents a client certificate to a webhook when its AdmissionConfiguration names a kubeconfig
# with a user for the webhook's Service (name: <service>.<namespace>.svc:<port>, "*" for any).
pki=/etc/kubernetes/kubectl-hami
cat > "$out/webhook-kubeconfig.yaml" <<KUBECONFIG
apiVersion: v1
kind: Config
users:
- name: $svc.$ns.svc:443
  user:
    client-certificate: $pki/apiserver-webhook-client.crt
    client-key: $pki/apiserver-webhook-client.key
KUBECONFIG
cat > "$out/admission-config.yaml" <<ADMISSION
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $pki/webhook-kubeconfig.yaml
ADMISSION
echo "certificates in $out (keep ca.key safe; it can sign clients the extender trusts)"
echo "on each control-plane node: copy apiserver-webhook-client.crt, apiserver-webhook-client.key, webhook-kubeconfig.yaml"
echo "and admission-config.yaml to $pki/ and start kube-apiserver with --admission-control-config-file=$pki/admission-config.yaml"
echo "(already using one? add the MutatingAdmissionWebhook entry to it); see docs/deploy.md, Security"
echo "Prometheus: scrape https://<pod>:8443/metrics with metrics-client.crt and metrics-client.key (and ca.crt)"

if $apply; then
  kubectl -n "$ns" create secret generic kubectl-hami-extender-tls --type=kubernetes.io/tls \
    --from-file=tls.crt="$out/server.crt" --from-file=tls.key="$out/server.key" --from-file=ca.crt="$out/ca.crt" \
    --dry-run=client -o yaml | kubectl apply -f -
  kubectl -n "$ns" create secret generic kubectl-hami-scheduler-client --type=kubernetes.io/tls \
    --from-file=tls.crt="$out/scheduler-client.crt" --from-file=tls.key="$out/scheduler-client.key" --from-file=ca.crt="$out/ca.crt" \
    --dry-run=client -o yaml | kubectl apply -f -
  if kubectl get mutatingwebhookconfiguration "$svc" >/dev/null 2>&1; then
    bundle=$(base64 < "$out/ca.crt" | tr -d '\n')
    kubectl patch mutatingwebhookconfiguration "$svc" --type=json \
      -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$bundle\"}]"
  fi
fi
