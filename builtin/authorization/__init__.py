"""Built-in behaviour of the authorization group's kinds."""
