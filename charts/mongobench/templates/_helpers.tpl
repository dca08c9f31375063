{{- define "mongobench.labels" -}}
app.kubernetes.io/name: mongobench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- define "mongobench.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- /* The operator's rules in the namespaces of the benchmarks (manifests/rbac.yaml has the
same; a test keeps them equal). */ -}}
{{- define "mongobench.operatorRules" -}}
# The benchmarks: read them, write their status (never their spec), delete one whose
# ttlSecondsAfterFinished has passed.
- apiGroups: [mongobench.io]
  resources: [mongobenchmarks]
  verbs: [get, list, watch, delete]
- apiGroups: [mongobench.io]
  resources: [mongobenchmarks/status]
  verbs: [get, patch, update]
# What the operator creates for a benchmark, all owned by it.
- apiGroups: [apps]
  resources: [statefulsets, deployments]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [services, configmaps, serviceaccounts]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, patch, delete]
# Sharded targets: no voluntary eviction of their members while the benchmark holds them.
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, patch, delete]
# The runners' Role (configmaps, which the operator holds itself: RBAC grants only what
# the granter has).
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, patch, delete]
# Server and runner pods: scheduling problems, image pulls, termination messages.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
# The keyfile and admin Secrets of a benchmark whose replica sets use authentication:
# created once, never read, so no get, list or watch (no other Secret is readable).
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
# Pods that admission refused exist only as FailedCreate events of their StatefulSet or
# Job.
- apiGroups: [""]
  resources: [events]
  verbs: [list]
# Events on benchmarks; repeats are patched into a series.
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}
