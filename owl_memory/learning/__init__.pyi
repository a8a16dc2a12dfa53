"""The public names of owl_memory.learning (the front door): owl_memory/lazy.py imports each on first use."""

from .consolidation import Report as Report, consolidate as consolidate, similarity as similarity
from .curation import Curated as Curated
from .curriculum import (
    load_curriculum as load_curriculum,
    load_examples as load_examples,
    map_endpoints as map_endpoints,
    map_task as map_task,
    shipped_curriculum as shipped_curriculum,
)
from .curriculum_make import make_curriculum as make_curriculum
from .endpoint_judge import grant_of as grant_of
from .extraction import Extraction as Extraction, RunRecord as RunRecord, extract as extract, outline as outline
from .generated import MakeOptions as MakeOptions
from .judging import (
    capped as capped,
    judge as judge,
    judge_answer as judge_answer,
    judge_ask as judge_ask,
    judge_shacl as judge_shacl,
    judge_sparql as judge_sparql,
    judge_structural as judge_structural,
)
from .loop import LearnedRun as LearnedRun, Learning as Learning, run as run, run_learning as run_learning
from .notes import reflected as reflected
from .packs import (
    check_pack as check_pack,
    export_pack as export_pack,
    import_pack as import_pack,
    pack_path as pack_path,
    shipped_packs as shipped_packs,
)
from .scoring import QuestionScore as QuestionScore, ScoreReport as ScoreReport, score_answers as score_answers
from .set_metric import set_scores as set_scores
from .tasks import Curriculum as Curriculum, Task as Task
from .train import train_curriculum as train_curriculum
