"""admissionregistration.k8s.io (kube's pkg/registry/admissionregistration and the admission plugins of
k8s.io/apiserver/pkg/admission/plugin/webhook): the webhook configurations and the plugins that call them."""
