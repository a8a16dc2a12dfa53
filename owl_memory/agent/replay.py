"""`--lm replay:ANSWERS.json`: a replay of the queries real systems recorded (a TEXT2SPARQL answers file, a JSON list
of {qname, question, query}), run by the agent's real endpoint tools. It is not a model and cannot use memory.

For each task the REPL steps are fixed: (1) `endpoint_query` of the recorded query on the run's first granted
endpoint, (2) `results_peek` over every row (under the run's caps and read budget, as a model's reads) and `SUBMIT`
of the result's values as a JSON list (an ASK's answer as true / false). The recorded query is model-written text:
it goes through the same guard as any agent query, so one the guard refuses or the endpoint rejects submits nothing.
A task the file does not answer submits nothing. The steps are answered in the adapter's field format and parsed
by dspy.RLM as a model's would be (dspy.utils.DummyLM), so tools, caps, the trajectory, judging, extraction,
consolidation, judge rules and EndpointProfiles all run on what the recorded system wrote.

Which recorded query a run replays: the runner binds the LM to each run (ReplayLM.for_task) by the run's task id
(RunConfig.task_id: a curriculum task's id, the challenge's qname "ck25:1-en"), else by the task's text equal to a
recorded question (whitespace collapsed; a curriculum's " (SPARQL endpoint: URL)" suffix ignored). Binding by id,
not by reading the prompt, keeps the match exact whatever a condition adds to the task (A1's text, A3's hint).
"""

from __future__ import annotations

from ..adapters.dspy import dspy
from .recorded import Recorded, question_text, read_recorded

PREFIX = "replay:"
MARKER = "# replay step one: the recorded query of {task}"
RUN_QUERY = """{marker}
QUERY = {query!r}
try:
    found = endpoint_query(endpoint_list()['endpoints'][0]['url'], QUERY)
except NameError:
    found = '[Error] this run has no endpoint tools: grant the endpoint the query was written for'
print(found)"""
SUBMIT_VALUES = """# replay step two: read every row, submit the values
import json
values, offset = [], 0
while isinstance(found, dict) and 'handle' in found and offset is not None:
    page = results_peek(found['handle'], 20, offset)
    if not isinstance(page, dict):
        print(page)
        break
    values += [v for row in page['rows'] for v in row.values()]
    offset = page['next']
if isinstance(found, dict) and 'ask' in found:
    SUBMIT(answer=str(found['ask']).lower())
else:
    SUBMIT(answer=json.dumps(sorted(set(values))) if values else '')"""
NOTHING = "SUBMIT(answer='')  # replay: the answers file records no query for this task"


class ReplayLM(dspy.utils.DummyLM):
    """A DSPy LM replaying a TEXT2SPARQL answers file; each run gets the copy bound to its task (for_task).

    Args:
        recorded: the answers file's queries (read_recorded).
        task_id, task: the run's task id and text; an unbound ReplayLM submits nothing.
    """

    def __init__(self, recorded: Recorded, task_id: str | None = None, task: str = ""):
        self.recorded = recorded
        super().__init__(_steps(task_id or question_text(task), recorded.query(task_id, task)))
        self.model = PREFIX + str(recorded.path)

    def for_task(self, task_id: str | None, task: str) -> ReplayLM:
        """The LM of one run: the recorded query of `task_id` (or of the question `task` asks), or none."""
        return ReplayLM(self.recorded, task_id, task)


def replay_lm(spec: str) -> ReplayLM:
    """The ReplayLM of a `replay:PATH` model string; LoadError for a missing or malformed file."""
    return ReplayLM(read_recorded(spec.removeprefix(PREFIX)))


def is_replay(lm: object) -> bool:
    """Whether an --lm value names a replay (`replay:PATH`)."""
    return isinstance(lm, str) and lm.startswith(PREFIX)


def _steps(task: str, query: str | None) -> dict[str, dict[str, str]]:
    """DummyLM's answers by a marker in the prompt: step two once step one is in the history, else step one (or
    the empty submission without a recorded query). Every answer also fills `answer`, so the RLM's extract call,
    should the iteration cap be reached, parses too."""
    if not query:
        return {"": {"reasoning": "Nothing is recorded for this task.", "code": NOTHING, "answer": ""}}
    marker = MARKER.format(task=task)
    return {marker: {"reasoning": "Read the rows and submit their values.", "code": SUBMIT_VALUES, "answer": ""},
            "": {"reasoning": "Run the recorded query.", "code": RUN_QUERY.format(marker=marker, query=query),
                 "answer": ""}}
