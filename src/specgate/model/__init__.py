"""The claims file as typed records: the deployment model, its schema validation, the build
from a loaded document, provenance, and the resolver that fills it from ``inputs/``."""
