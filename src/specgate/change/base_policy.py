"""Who may silence the baseline rules (SG401–SG403) in a ``--baseline`` run.

A pull request cannot loosen its own gate (docs/change-gate.md#base-policy): the policy comes from
the base revision, and so does the right to silence these rules. An inline
``# specgate: ignore[SG401]`` counts only when the claims file had a suppression of
that rule at REF; ``ignore``/``per-file-ignores`` in the configuration file count
only when that file ignored the rule at REF; a ``select`` that leaves the rule out
counts only when the file's ``select`` left it out at REF. A configuration file
outside the repository (one the change cannot edit), ``--ignore``/``--select`` on the
command line and ``fail-on`` are the workflow's, like the workflow file itself:
they still silence, and the reports name every suppressed baseline finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from specgate.rules.registry import BASELINE_CODES

if TYPE_CHECKING:
    from pathlib import Path

    from specgate.change.baseline import BaselineSource
    from specgate.project.config import Config



class BaseGate:
    """Answers, for one claims file under one configuration, whether the base
    revision allows silencing a rule; every answer is ``True`` without
    ``--baseline`` or for other rules. Each base read happens at most once."""

    def __init__(self, source: BaselineSource | None, config: Config, claims: Path) -> None:
        self.source, self.config, self.claims = source, config, claims
        self._inline: frozenset[str] | None = None
        self._config: Config | None = None

    def _applies(self, code: str) -> bool:
        return self.source is not None and code in BASELINE_CODES

    def inline_allowed(self, code: str) -> bool:
        """An inline suppression of ``code`` silences it."""
        if not self._applies(code):
            return True
        if self._inline is None:
            from specgate.change.baseline import base_suppressions

            assert self.source is not None
            self._inline = base_suppressions(self.source, self.claims)
        return code in self._inline

    def _base(self) -> Config:
        if self._config is None:
            from specgate.change.baseline import base_config

            assert self.source is not None
            self._config = base_config(self.source, self.config)
        return self._config

    def ignore_allowed(self, code: str) -> bool:
        """The configuration's ``ignore`` of ``code`` silences it."""
        return not self._applies(code) or code in self._base().ignored_for(self.claims)

    def deselect_allowed(self, code: str) -> bool:
        """The configuration's ``select`` may leave ``code`` out."""
        if not self._applies(code):
            return True
        base = self._base()
        return base.select is not None and code not in base.select
