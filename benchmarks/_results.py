"""What the benchmarks share: writing their results JSON atomically (a killed run leaves the
old file or none, never half of one), through the package's own atomic writer, so the file
gets the permissions a new file gets (a bare mkstemp left it 0600)."""

from __future__ import annotations

import json
from pathlib import Path

from rtsched._io import write_text_atomic


def write_atomic(path: Path, doc: dict) -> None:
    write_text_atomic(path, json.dumps(doc, indent=2) + "\n")
