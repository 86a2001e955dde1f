"""apiregistration.k8s.io (k8s.io/kube-aggregator): APIServices and the aggregator that proxies their
group-versions to other API servers, with the availability check and the merged discovery and OpenAPI."""
