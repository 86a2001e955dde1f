"""kube's garbage collector (pkg/controller/garbagecollector), run by the server."""
