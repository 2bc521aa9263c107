"""What the checked repository says: ``[tool.specgate]`` settings, the claims files found,
ignore directives."""
