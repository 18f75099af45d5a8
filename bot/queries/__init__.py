"""Read-side queries of the records: player stats, leaderboards and game history (no Discord)."""
