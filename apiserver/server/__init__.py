"""Server assembly: the ASGI application, start-up (bootstrap namespaces), and the `serve` command."""
