"""Calling webhooks the way k8s.io/apiserver's webhook client does: a ``clientConfig`` (url, or a Service
reference resolved through the Service), TLS verified against ``caBundle``, and kube's error wording."""
