"""The `apiforge` command: generate, scaffold and serve."""
