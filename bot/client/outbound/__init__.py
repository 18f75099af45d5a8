"""Outbound REST work that is not an interaction's answer: one paced lane (`lane`), and
the guard that watches Discord's refusals (`guard`)."""
