"""cardtable: a Discord bot that hosts Amigo's card games."""
