"""The gate on a change: ``--baseline REF``, ``--changed``, ``--staged`` and the git calls
they make."""
