"""Running the process: settings, heartbeat, the instance lock and garbage-collector tuning."""
