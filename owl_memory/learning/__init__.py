"""The learning loop: judge a run, extract items, consolidate them into memory, with PROV-O provenance."""

from .curriculum import Curriculum, Task, load_curriculum, load_examples, shipped_curriculum
from .judge import Judgment, judge, judge_answer, judge_ask, judge_llm, judge_shacl, judge_sparql, judge_structural

__all__ = [
    "Curriculum", "Judgment", "Task", "judge", "judge_answer", "judge_ask", "judge_llm", "judge_shacl",
    "judge_sparql", "judge_structural", "load_curriculum", "load_examples", "shipped_curriculum",
]
