"""Pure formulas and the figures they take: speedup, break-even, best draft length, attention
tiles, the statistics of accept-length evidence, the shipped GPU table. No thresholds."""
