"""Tests of the message catalogues, their translations and the slash-command translator."""
