"""Where the real test and benchmark material lives: OWL_MEMORY_DATA, default ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError

_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_dir(required: bool = True) -> Path | None:
    """The shared data directory; ConfigError (or None when not required) if it is absent."""
    d = Path(os.environ.get("OWL_MEMORY_DATA") or _DEFAULT)
    if d.is_dir():
        return d
    if required:
        raise ConfigError(f"shared data directory {d} not found; set OWL_MEMORY_DATA to the folder holding "
                          "shacl-w3c-core/ and ontologies/")
    return None
