"""May this user do this: the attributes of a request as kube's authorizer sees them, the Authorizer seam, and
its implementations (AlwaysAllow today)."""
