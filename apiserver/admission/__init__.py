"""Admission (k8s.io/apiserver pkg/admission): plugins that see every write with its attributes after the
object is decoded and defaulted, mutating ones first, then validating ones, and may change (mutating) or refuse
it. The registry's Store runs the chain, so a write from a controller or the bootstrap is admitted like one
from kubectl."""
