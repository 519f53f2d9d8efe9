{{/* The chart's labels on every object, beside the kustomize bases' own. */}}
{{- define "kubectl-hami.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The agent's mode: agent.mode, or by default full (observe with hamiTakeOver: HAMi's device plugin stays). */}}
{{- define "kubectl-hami.agentMode" -}}
{{- if .Values.agent.mode -}}
{{- .Values.agent.mode -}}
{{- else if .Values.hamiTakeOver.enabled -}}
observe
{{- else -}}
full
{{- end -}}
{{- end }}

{{/* Where the certificates come from: cert-manager or helm (values certificates.source). */}}
{{- define "kubectl-hami.certificates" -}}
{{- $s := .Values.certificates.source -}}
{{- if eq $s "auto" -}}
{{- if .Capabilities.APIVersions.Has "cert-manager.io/v1" }}cert-manager{{ else }}helm{{ end -}}
{{- else if or (eq $s "cert-manager") (eq $s "helm") -}}
{{- $s -}}
{{- else -}}
{{- fail (printf "certificates.source must be auto, cert-manager or helm, not %q" $s) -}}
{{- end -}}
{{- end }}

{{/* HAMi's release namespace and the name of its scheduler (hamiTakeOver). */}}
{{- define "kubectl-hami.hamiNamespace" -}}
{{- default .Release.Namespace .Values.hamiTakeOver.namespace -}}
{{- end }}
{{- define "kubectl-hami.hamiScheduler" -}}
{{- printf "%s-scheduler" .Values.hamiTakeOver.release | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
kubectl-hami.pki: the chart's own CA and certificates (certificates source helm), computed once per render and
kept in .Values._pki: each existing Secret is looked up and reused (so an upgrade keeps them), a missing one is
signed by the existing CA (Secret kubectl-hami-extender-ca) or, without it, by a new one.
*/}}
{{- define "kubectl-hami.pki" -}}
{{- if not (hasKey .Values "_pki") -}}
{{- $ns := .Release.Namespace -}}
{{- $svc := "kubectl-hami-extender" -}}
{{- $pki := dict -}}
{{- $caSecret := lookup "v1" "Secret" $ns "kubectl-hami-extender-ca" -}}
{{- $ca := "" -}}
{{- if and $caSecret (index ($caSecret.data | default dict) "tls.crt") (index ($caSecret.data | default dict) "tls.key") -}}
{{- $ca = buildCustomCert (index $caSecret.data "tls.crt") (index $caSecret.data "tls.key") -}}
{{- $_ := set $pki "ca" (dict "crt" (index $caSecret.data "tls.crt" | b64dec) "key" (index $caSecret.data "tls.key" | b64dec) "new" false) -}}
{{- else -}}
{{- $ca = genCA "kubectl-hami-extender-ca" (int .Values.certificates.caDays) -}}
{{- $_ := set $pki "ca" (dict "crt" $ca.Cert "key" $ca.Key "new" true) -}}
{{- end -}}
{{- $leaves := list
  (list "server" "kubectl-hami-extender-tls" $svc (list "127.0.0.1") (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns)))
  (list "schedulerClient" "kubectl-hami-scheduler-client" "kubectl-hami-scheduler" (list) (list))
  (list "webhookClient" "kubectl-hami-apiserver-webhook-client" "kube-apiserver" (list) (list)) -}}
{{- range $leaves -}}
{{- $key := index . 0 -}}
{{- $existing := lookup "v1" "Secret" $ns (index . 1) -}}
{{- $data := $existing.data | default dict -}}
{{- if and (not $pki.ca.new) (index $data "tls.crt") (index $data "tls.key") (eq (index $data "ca.crt" | default "" | b64dec) $pki.ca.crt) -}}
{{- $_ := set $pki $key (dict "crt" (index $data "tls.crt" | b64dec) "key" (index $data "tls.key" | b64dec)) -}}
{{- else -}}
{{- $c := genSignedCert (index . 2) (index . 3) (index . 4) (int $.Values.certificates.days) $ca -}}
{{- $_ := set $pki $key (dict "crt" $c.Cert "key" $c.Key) -}}
{{- end -}}
{{- end -}}
{{- $_ := set .Values "_pki" $pki -}}
{{- end -}}
{{- end }}
