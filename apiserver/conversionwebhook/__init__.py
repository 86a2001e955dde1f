"""`apiforge conversion-webhook`: the project's declared conversions served as a CRD conversion webhook, for
clusters that install the exported CRDs (docs/export.md)."""
