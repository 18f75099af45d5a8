"""What the bot remembers of games: results, skill ratings (pure, no I/O)."""
