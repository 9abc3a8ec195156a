{{/* Labels every object of the release carries. */}}
{{- define "corridor.labels" -}}
app.kubernetes.io/part-of: corridor
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The Secret holding DATABASE_URL, REDIS_URL and KAFKA_BROKERS. */}}
{{- define "corridor.infraSecretName" -}}
{{- .Values.infra.existingSecret | default (printf "%s-infra" .Release.Name) -}}
{{- end }}

{{/* CORRIDOR_QUOTES_FX_URL for quotes-fx: where the gateway and the services find a service. */}}
{{- define "corridor.serviceUrlKey" -}}
{{- printf "CORRIDOR_%s_URL" (. | replace "-" "_" | upper) -}}
{{- end }}

{{/* Whether a deployable entry is switched on (absent `enabled` means on). */}}
{{- define "corridor.enabled" -}}
{{- if or (not (hasKey . "enabled")) .enabled }}true{{ end -}}
{{- end }}
