"""What k8s.io/apimachinery holds for the rest of the runtime: the Scheme of served kinds, API errors as
Kubernetes Status values, label and field selectors, JSONPath, the conversion helpers and model base class
that generated code calls, and the ``Object`` alias every layer passes objects as."""
