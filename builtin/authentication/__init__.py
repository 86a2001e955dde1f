"""Built-in behaviour of the authentication group's kinds."""
