"""Who is asking: the UserInfo every request carries (k8s.io/apiserver pkg/authentication/user), and the
authenticators that turn a request's credentials into one."""
