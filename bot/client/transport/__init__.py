"""A move's REST calls to Discord."""
