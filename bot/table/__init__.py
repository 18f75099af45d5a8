"""The table core every game shares: sessions, the one change path, timers (no Discord)."""
