"""HTTP endpoints: request parsing, content negotiation, discovery, OpenAPI, and the resource handlers."""
