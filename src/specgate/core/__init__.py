"""The words every layer speaks: errors, findings, limits, numbers, paths, package data and
the vocabulary of mechanisms and engines. Nothing here imports the rest of specgate."""
