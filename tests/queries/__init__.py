"""Tests of the read-side queries: player stats, leaderboards, history."""
