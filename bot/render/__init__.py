"""Turn table state into Discord embeds (no I/O, no game logic)."""
