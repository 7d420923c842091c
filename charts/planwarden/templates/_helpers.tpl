{{/* Labels of every object: the kustomize install's, plus Helm's. */}}
{{- define "planwarden.labels" -}}
app.kubernetes.io/name: planwarden
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: planwarden
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end }}

{{/* Pod selector of a component; the same as the kustomize install's, so that it can take over. */}}
{{- define "planwarden.selector" -}}
app.kubernetes.io/name: planwarden
app.kubernetes.io/component: {{ . }}
{{- end }}

{{- define "planwarden.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The caBundle of the webhook configurations in selfSigned mode; never empty. */}}
{{- define "planwarden.caBundle" -}}
{{- $ca := required "certificate.mode=selfSigned needs the webhook's CA, or every planwarden write fails TLS verification: run `npx tsx certs/generate.ts --namespace NAMESPACE --out tls` and pass --set-file certificate.selfSigned.caCert=tls/ca.crt (and tlsCert, tlsKey), or use certificate.mode=certManager" .Values.certificate.selfSigned.caCert -}}
{{- $ca | b64enc -}}
{{- end }}

{{/* The clientConfig of one webhook: the Service, a route, and the CA when the chart holds it. */}}
{{- define "planwarden.clientConfig" -}}
{{- if eq .root.Values.certificate.mode "selfSigned" }}
caBundle: {{ include "planwarden.caBundle" .root }}
{{- end }}
service:
  name: planwarden-webhook
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end }}

{{- define "planwarden.certManagerAnnotations" -}}
{{- if eq .Values.certificate.mode "certManager" }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/planwarden-webhook
{{- end }}
{{- end }}

{{- define "planwarden.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}
