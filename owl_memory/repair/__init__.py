"""SHACL repair: verify, patch each violation with deterministic operators (compiled ones first), re-verify, compile.

Every repair takes its steps through a repair session (`session.py`): the repair command's rounds (`loop.py`), the
symbolic sprint and a construction agent's tools. The operators live in `components/`, one module per section of the
SHACL spec's constraint components; importing this package registers them all. With a `proposer`, what no operator
derives is asked of it (`proposed.py`).

The public names are those of `__init__.pyi`, imported on first use (owl_memory/lazy.py).
"""

from ..lazy import front_door
from . import components  # noqa: F401  (registers every strategy)

__all__, __getattr__, __dir__ = front_door(__name__, __file__)
