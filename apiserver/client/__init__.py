"""Clients of other API servers: what the server itself calls (delegated reviews, aggregated backends)."""
