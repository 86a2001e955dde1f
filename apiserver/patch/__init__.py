"""The three patch formats a PATCH request may carry: JSON patch (RFC 6902) and JSON merge patch (RFC 7386) in
``jsonpatch``, kube's schema-driven strategic merge patch in ``strategic``."""
