"""The public names of owl_memory (the front door): owl_memory/lazy.py imports each on first use."""

from .ablation import ablate as ablate
from .agent import RLM as RLM
from .agent.tools import OwlTool as OwlTool, tools as tools
from .construction import run_sprint as run_sprint
from .errors import (
    CapExceeded as CapExceeded,
    ConfigError as ConfigError,
    InvalidItem as InvalidItem,
    LoadError as LoadError,
    OwlMemoryError as OwlMemoryError,
    ToolError as ToolError,
    UnknownItem as UnknownItem,
)
from .learning import LearnedRun as LearnedRun, run as run
from .llm import run_agentic_sprint as run_agentic_sprint
from .model import (
    Hit as Hit,
    Item as Item,
    ItemSpec as ItemSpec,
    MemoryAccess as MemoryAccess,
    OntologyContext as OntologyContext,
    Ref as Ref,
    RunConfig as RunConfig,
    RunResult as RunResult,
    Window as Window,
)
from .store import (
    BlobStore as BlobStore,
    Memory as Memory,
    ReadBudget as ReadBudget,
    ontology_context as ontology_context,
)

__version__: str
