"""The public names of owl_memory.repair (the front door): owl_memory/lazy.py imports each on first use."""

from .candidates import Candidates as Candidates
from .compiling import compile_decisions as compile_decisions
from .context import Context as Context
from .guards import Guards as Guards, shape_triples as shape_triples, target_nodes as target_nodes
from .loop import FIXED_TERM as FIXED_TERM, repair as repair
from .patch import Chosen as Chosen, Patch as Patch, applied as applied
from .result import RepairResult as RepairResult
from .synth import default_literal as default_literal, generate as generate, generate_iri as generate_iri
from .verification import (
    NestedChecks as NestedChecks,
    VerifyResult as VerifyResult,
    Violation as Violation,
    delta_focus as delta_focus,
    verify as verify,
)
