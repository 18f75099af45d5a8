"""Tests of the renderers: messages, components, limits and (in images/) the table pictures."""
