"""The kube-apiserver oracle: a real kube-apiserver and kube-controller-manager, built from the Go module proxy
(``oracle/build.sh``) and run on their own etcd, so that apiforge's fidelity is measured against the real
thing rather than read from memory of kube's source. ``python -m oracle --help`` lists the commands."""
