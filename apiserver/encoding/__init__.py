"""Wire formats besides JSON: Kubernetes protobuf request bodies, OpenAPI v2 as gnostic protobuf, and YAML read
as kube reads it."""
