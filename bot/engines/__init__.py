"""Pure rules engines: no discord, no asyncio, no I/O."""
