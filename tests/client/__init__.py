"""Tests of the Discord client below the interaction layer: replies, the lean click, the
outbound lane."""
