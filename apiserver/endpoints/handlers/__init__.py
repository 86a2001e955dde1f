"""The REST verbs' handlers, one module per verb as kube's k8s.io/apiserver/pkg/endpoints/handlers splits them
(get.go, create.go, update.go, patch.go, delete.go): each takes the request, the resource's Store and the
Target the URL names."""
