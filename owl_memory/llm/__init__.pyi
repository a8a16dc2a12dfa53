"""The public names of owl_memory.llm (the front door): owl_memory/lazy.py imports each on first use."""

from .agent_sprint import run_agentic_sprint as run_agentic_sprint
from .drafts import Draft as Draft, llm_drafts as llm_drafts, parse_draft as parse_draft
from .judge import judge_llm as judge_llm
from .proposer import LLMProposer as LLMProposer
from .repair_proposer import LLMRepairProposer as LLMRepairProposer
