"""The engine as oracle (docs/engines.md#the-engine-as-oracle, issue 16): corpus generation and
recording.

Runs inside an engine's own environment (scripts/build_oracle_env.sh), never inside
specgate's: nothing here imports the ``specgate`` package. The knowledge data is read as
plain JSON from the path given on the command line.
"""
