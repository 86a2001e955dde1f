"""The filter chain (k8s.io/apiserver pkg/endpoints/filters, pkg/server/filters): ASGI wrappers that every
HTTP request passes before the API server answers it, composed in one place (apiserver/server/chain.py) in
kube-apiserver's order: request info, authentication, audit, impersonation, max-in-flight, authorization.

Each filter reads and writes the ASGI scope (the request info and user under ``endpoints.http``'s keys) and
either calls the next or answers itself; each is cheap on the path every GET takes."""
