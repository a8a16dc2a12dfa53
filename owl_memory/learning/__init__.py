"""The learning loop: judge a run, extract items, consolidate them into memory, with PROV-O provenance."""

from ..llm.judge import judge_llm
from ..model.judgments import Expect, Judgment
from .consolidate import Report, consolidate, similarity
from .curriculum import Curriculum, Task, load_curriculum, load_examples, shipped_curriculum
from .extract import Extraction, RunRecord, extract
from .judge import judge, judge_answer, judge_ask, judge_shacl, judge_sparql, judge_structural
from .packs import export_pack, import_pack, shipped_packs
from .provenance import FAILED_RUN_ITEMS, UNTRACED_ITEMS, RunInfo, provenance_graph

__all__ = [
    "Curriculum", "Expect", "Extraction", "FAILED_RUN_ITEMS", "Judgment", "Report", "RunInfo", "RunRecord", "Task",
    "UNTRACED_ITEMS", "consolidate", "export_pack", "extract", "import_pack", "judge", "judge_answer", "judge_ask",
    "judge_llm", "judge_shacl", "judge_sparql", "judge_structural", "load_curriculum", "load_examples",
    "provenance_graph", "shipped_curriculum", "shipped_packs", "similarity",
]
