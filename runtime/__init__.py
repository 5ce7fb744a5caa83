"""The runtime every generated parser shares: scanning, dialects, coercion, registry."""
