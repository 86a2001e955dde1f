"""The filter chain (k8s.io/apiserver pkg/endpoints/filters, pkg/server/filters): the steps every HTTP request
passes before the API server answers it, run in one coroutine per request (pipeline.py) in kube-apiserver's
order, composed in one place (apiserver/server/chain.py): audit ID, request info, metrics, timeout,
authentication, audit, impersonation, priority and fairness (or max-in-flight), authorization.

Each filter reads and writes the request's exchange and the ASGI scope (the request info and user under
``endpoints.http``'s keys) and either lets the request go on or answers it; each is cheap on the path every
GET takes."""
