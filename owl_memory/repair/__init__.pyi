"""The public names of owl_memory.repair (the front door): owl_memory/lazy.py imports each on first use."""

from .guards import (
    Guards as Guards,
    shape_triples as shape_triples,
    target_losses as target_losses,
    target_nodes as target_nodes,
)
from .loop import FIXED_TERM as FIXED_TERM, repair as repair
from .patch import Candidate as Candidate, Patch as Patch, applied as applied
from .result import RepairResult as RepairResult
from .session import RepairSession as RepairSession, Step as Step
from .synth import default_literal as default_literal, generate as generate, generate_iri as generate_iri
from .verification import VerifyResult as VerifyResult, verify as verify
