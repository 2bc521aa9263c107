"""``specgate measure``: scrape a running engine's metrics, turn them into evidence, write
the evidence into a claims file."""
