"""The Scorer interface (sdk.Scorer, sdk.Configurer, io.Closer)."""

from __future__ import annotations

from typing import Any, Dict

from ._contract import Info, Result
from ._judge import Call


class Scorer:
    """A scorer grades runs. Subclass it and define info() and score(); configure() and
    close() are optional.

    The host drives it through these steps: it constructs the scorer (the class, or the
    factory given to serve(), called with no argument), reads info() once, validates the
    caller's config against info().config_schema and merges info().defaults under it, calls
    configure() once with the result (a dict), then score() for each run, one call at a time,
    and close() when it drops the instance.

    score() returns a Result (scored, skipped or failed). An exception it raises becomes a
    failed result with the exception's message (and code, for a ScorerError): never a 0."""

    def info(self) -> Info:
        raise NotImplementedError(f"{type(self).__name__} must define info()")

    def configure(self, config: Dict[str, Any]) -> None:
        """Takes the config, already validated against the schema and merged over the
        defaults. Raise ScorerError(INVALID_CONFIG, "what is wrong and how to fix it") (or
        any exception) to refuse it."""

    def score(self, call: Call) -> Result:
        raise NotImplementedError(f"{type(self).__name__} must define score()")

    def close(self) -> None:
        """Releases what the instance holds. Optional."""
