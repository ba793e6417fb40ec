{{/* The name every object carries: the release name, with "hubprobe" appended unless it holds it already. */}}
{{- define "hubprobe.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels that select the pods; never change them on upgrade. */}}
{{- define "hubprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hubprobe.labels" -}}
{{ include "hubprobe.selectorLabels" . }}
app.kubernetes.io/part-of: hubprobe
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "hubprobe.serviceAccountName" -}}
{{- default (include "hubprobe.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "hubprobe.sharded" -}}
{{- if gt (int .Values.shards) 1 }}true{{ end -}}
{{- end -}}

{{- define "hubprobe.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
{{- end -}}
