"""The public names of owl_memory.construction (the front door): owl_memory/lazy.py imports each on first use."""

from .agentic_result import AgentSprintResult as AgentSprintResult
from .cq import CompetencyQuestion as CompetencyQuestion, evaluate as evaluate
from .distillation import RunRecord as RunRecord, distill as distill
from .output import check_out as check_out, write_out as write_out
from .proposer import Proposal as Proposal
from .session import ConstructionSession as ConstructionSession
from .sprint import run_sprint as run_sprint
from .sprint_events import SprintEvent as SprintEvent
from .sprint_file import (
    Sprint as Sprint,
    default_sprint as default_sprint,
    load_sprint as load_sprint,
    repair_sprint as repair_sprint,
)
from .sprint_result import SprintResult as SprintResult
from .tools import bound as bound, session_tools as session_tools
from .workspace import copy_graph as copy_graph, nt_line as nt_line
