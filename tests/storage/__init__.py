"""Tests of the storage backends (SQLite, PostgreSQL) and of the servers the suite runs."""
