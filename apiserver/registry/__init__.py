"""The generic registry (k8s.io/apiserver's registry/generic): one Store per resource doing what every kind
shares (metadata, optimistic concurrency, status split, finalizers, paging, watch), the watch cache in front of
storage, the storage codec, and the per-kind strategy seam the Store calls at fixed points."""
