"""The public names of owl_memory.agent (the front door): owl_memory/lazy.py imports each on first use."""

from .conditions import CONDITIONS as CONDITIONS, HELP as HELP
from .context import Layer as Layer, preview as preview
from .endpoint_client import EndpointClient as EndpointClient
from .metrics import (
    run_metrics as run_metrics,
    spent as spent,
    summed as summed,
)
from .query_worker import QueryLimits as QueryLimits, QueryResult as QueryResult, QueryWorker as QueryWorker
from .recorded import Recorded as Recorded, read_recorded as read_recorded
from .replay import ReplayLM as ReplayLM
from .runner import (
    LM_ENV as LM_ENV,
    RLM as RLM,
    interpreter_factory as interpreter_factory,
    lm_name as lm_name,
    resolve_lm as resolve_lm,
    run as run,
)
from .scripted import SCRIPTED as SCRIPTED
from .tools.caps import as_text as as_text, clip as clip, dumps as dumps, is_error as is_error
from .tools.ontology import CLASS_TYPES as CLASS_TYPES, PROPERTY_TYPES as PROPERTY_TYPES, OntologyTools as OntologyTools
from .tools.toolbox import (
    DEFAULT_ACCESS as DEFAULT_ACCESS,
    OwlTool as OwlTool,
    Toolbox as Toolbox,
    ToolFamily as ToolFamily,
    family as family,
)
from .trajectory import (
    agent_queries as agent_queries,
    answering_query as answering_query,
    find_trajectory as find_trajectory,
    read_trajectory as read_trajectory,
    run_summary as run_summary,
    trajectory_folder as trajectory_folder,
)
