"""The server's Prometheus metrics, with kube-apiserver's names and labels (k8s.io/apiserver/pkg/endpoints/metrics,
k8s.io/apiserver/pkg/storage/etcd3/metrics), served at ``/metrics`` in the Prometheus text format."""
