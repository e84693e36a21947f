"""One generator of a sweep, as the spec holds it (:class:`Generator`), and the parameter its
utilisation points set when the spec does not say (:data:`DEFAULT_PARAM`). Below both the
spec (:mod:`.spec`) and its schema (:mod:`.schema`), which builds the generators."""

from __future__ import annotations

from dataclasses import dataclass

# Which generator parameter the utilisation points set, when the spec does not say.
DEFAULT_PARAM = {"paws2013": "window", "lelli2011": "R"}


@dataclass(frozen=True)
class Generator:
    """One generator of a sweep: its name, fixed parameters, and which parameter the points set."""

    name: str
    params: tuple  # sorted (key, value) pairs, values as strings
    param: str
    label: str

    @property
    def params_dict(self) -> dict:
        return dict(self.params)
