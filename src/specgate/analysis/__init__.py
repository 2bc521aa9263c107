"""What the theory says about one deployment: derived metrics, the mechanism class that
fits, the config digest."""
