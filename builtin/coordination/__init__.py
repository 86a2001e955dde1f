"""Built-in behaviour of the coordination.k8s.io kinds: Lease, and leader election over Leases."""
