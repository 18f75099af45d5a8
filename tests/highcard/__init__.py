"""High card: a tiny third game that exists only in tests, to prove a game needs only its files."""
