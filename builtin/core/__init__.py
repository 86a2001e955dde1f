"""Built-in behaviour of the core (v1) group's kinds."""
