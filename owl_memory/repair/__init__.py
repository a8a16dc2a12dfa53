"""SHACL repair: verify, patch each violation with deterministic operators (compiled ones first), re-verify, compile.

The operators live in `components/`, one module per section of the SHACL spec's constraint components; importing
this package registers them all. With a `proposer`, what no operator derives is asked of it (`proposed.py`).
"""

from . import components  # noqa: F401  (registers every strategy)
from .guards import shape_triples, target_nodes
from .loop import FIXED_TERM, repair
from .result import RepairResult

__all__ = ["FIXED_TERM", "RepairResult", "repair", "shape_triples", "target_nodes"]
