"""Tests of process operations: settings, the command line, health, the instance lock, gc tuning."""
