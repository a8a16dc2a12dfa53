"""The learning loop: judge a run, extract items, consolidate them into memory, with PROV-O provenance."""

from .consolidate import Report, consolidate, similarity
from .curriculum import Curriculum, Task, load_curriculum, load_examples, shipped_curriculum
from .extract import Extraction, RunRecord, extract
from .judge import Judgment, judge, judge_answer, judge_ask, judge_llm, judge_shacl, judge_sparql, judge_structural
from .packs import export_pack, import_pack, shipped_packs
from .provenance import FAILED_RUN_ITEMS, UNTRACED_ITEMS, RunInfo, provenance_graph

__all__ = [
    "FAILED_RUN_ITEMS", "UNTRACED_ITEMS", "Curriculum", "Extraction", "Judgment", "Report", "RunInfo", "RunRecord",
    "Task", "consolidate", "export_pack", "extract", "import_pack", "judge", "judge_answer", "judge_ask", "judge_llm",
    "judge_shacl", "judge_sparql", "judge_structural", "load_curriculum", "load_examples", "provenance_graph",
    "shipped_curriculum", "shipped_packs", "similarity",
]
