"""The rule catalogue and its docs: small pure functions over a typed deployment, one module
per family, registered in one place (:mod:`specgate.rules.catalogue`)."""
