"""What happened, for the record (k8s.io/apiserver pkg/audit): audit events of every request in
audit.k8s.io/v1's shape, the policy that says what to record, and the backends that keep it."""
