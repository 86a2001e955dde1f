"""Built-in behaviour of the rbac.authorization.k8s.io kinds: their validation, the RBAC authorizer and its
indexes, escalation prevention, ClusterRole aggregation and the bootstrap policy (kube's pkg/apis/rbac,
pkg/registry/rbac and plugin/pkg/auth/authorizer/rbac)."""
