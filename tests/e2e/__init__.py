"""End to end: the real bot in SimCord, and bot processes started as the tests start them."""
