"""Pictures of the table: pure Pillow renderers from the same public facts as the embeds."""
