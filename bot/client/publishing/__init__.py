"""Publishing: what a change shows on Discord (table edits, pictures, DMs, pings)."""
