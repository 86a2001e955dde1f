"""The generic runtime of apiforge: the analog of k8s.io/apiserver. It knows no resource by name."""
