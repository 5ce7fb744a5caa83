"""Drop-in adapters for serving stacks. Each adapter imports its stack; this package does not."""
