"""The strict-RLM runner: one dspy.RLM run over capped tools, with a validated trajectory and measured leakage.

It runs one agent from a RunConfig and knows nothing of learning (owl_memory.learning.loop wraps it).
The prompt never enters the model's context: the RLM's inputs carry only its handle (ref, kind, size, sha).
By default generated code runs in dspy's LocalInterpreter, a local Python subprocess that is NOT a sandbox
(it has your files, network and credentials); `sandbox=True` runs it under bubblewrap instead (agent/sandbox.py).
Tools take positional or keyword arguments under both: see RLM for why dspy.RLM needs help on LocalInterpreter.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rdflib import Graph

from ..adapters.dspy import HookedRLM, LocalInterpreter, calls_before, calls_since, dspy, format_output, language_model
from ..errors import ConfigError
from ..model import (
    Hit,
    Iteration,
    MemoryUse,
    OntologyBrief,
    RunComplete,
    RunConfig,
    RunMetrics,
    RunResult,
    RunSettings,
    RunStart,
)
from ..rdfio import load_graph
from ..store import ReadBudget
from ..vocab import OWL, RDF
from . import context
from .constraints import query_constraints
from .injection import FIELD, Retrieval, experience, hint_text, retrieve
from .metrics import note_spent, run_metrics
from .replay import ReplayLM, is_replay, replay_lm
from .scripted import SCRIPTED, scripted_lm
from .tools import OwlTool, Toolbox
from .tools.endpoint import endpoint_vocabularies, granted_urls, prepare_endpoints, remember_endpoints
from .trajectory import Trajectory, answering_query, trajectory_folder

if TYPE_CHECKING:
    from ..store import Memory
    from .sandbox import Sandbox

LM_ENV = "OWL_MEMORY_LM"
INSTRUCTIONS = """Solve `task`. The prompt text is NOT in your variables: `prompt` holds only its handle
(ref, size, sha). Read it in small windows with prompt_window / prompt_find; explore the ontology with the
ontology_* tools (ontology_query returns a results handle: read rows with results_peek); search procedural memory
with memory_search / memory_get when those tools exist (or read it as plain files with files_list / files_grep /
files_read when those exist). Every read is capped and the run has a read budget, so
print only what you need. Tools accept positional or keyword arguments; a result starting with [Error] says what
to do instead. SUBMIT(answer) when done."""


def resolve_lm(lm: object = None, api_base: str | None = None, max_tokens: int | None = None,
               timeout: float | None = None) -> dspy.BaseLM:
    """A DSPy LM from an LM object, a model string, or $OWL_MEMORY_LM; ConfigError naming --lm when none.

    For a model string, `max_tokens` bounds every call's completion (sent as `max_tokens`, and to an `api_base`
    server also as `max_completion_tokens`: local servers honour one or the other) and `timeout` the seconds one
    attempt may take (litellm's request timeout; dspy retries a failed call up to 3 times)."""
    lm = lm if lm is not None else os.environ.get(LM_ENV) or None
    if lm is None:
        raise ConfigError(f"no LM given: pass --lm MODEL (any DSPy/litellm model string, e.g. openai/gpt-4o-mini) "
                          f"or set {LM_ENV}")
    if not isinstance(lm, str):
        return lm
    if lm == SCRIPTED:
        return scripted_lm()
    if is_replay(lm):
        return replay_lm(lm)
    kwargs: dict[str, str | int | float] = {"api_base": api_base} if api_base else {}
    if max_tokens:
        kwargs.update(max_tokens=int(max_tokens), **({"max_completion_tokens": int(max_tokens)} if api_base else {}))
    if timeout:
        kwargs["timeout"] = float(timeout)
    if api_base and lm.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        kwargs["api_key"] = "local-server"  # OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) take any key
    try:
        return language_model(lm, **kwargs)
    except ValueError as e:
        raise ConfigError(f"bad LM model string {lm!r}: {e}; use provider/model, e.g. openai/gpt-4o-mini") from e


def lm_name(lm: object) -> str:
    """An LM as trajectories and provenance name it: its model string, else its type."""
    return str(getattr(lm, "model", type(lm).__name__))


def interpreter_factory(sandbox: bool | Sandbox = False) -> Callable[[], Any]:
    """dspy's LocalInterpreter (not a sandbox); with sandbox=True a bubblewrap Sandbox (or the Sandbox given)."""
    if not sandbox:
        return LocalInterpreter
    from .sandbox import Sandbox

    return sandbox if isinstance(sandbox, Sandbox) else Sandbox()


class RLM(HookedRLM):
    """dspy.RLM whose interpreter passes positional arguments on to OwlTool tools (any interpreter).

    Its default interpreter is dspy's LocalInterpreter, a local Python subprocess that needs nothing beyond the
    package's dependencies and is NOT a sandbox (the model's code has your files, network and credentials); pass
    `interpreter_factory=Sandbox()` (agent/sandbox.py, bubblewrap) to contain it. dspy's own default, a Deno
    interpreter, needs Deno installed. dspy 3.4.1 wraps each tool as `invoke(**kwargs)` before LocalInterpreter
    sees it, so `prompt_window(0, 50)` fails there whatever the tool accepts (the Sandbox speaks the same protocol);
    this RLM hands OwlTool tools over as they are, so both call styles work.

    Args:
        *args, **kwargs: as for dspy.RLM (signature, max_iters, tools, interpreter_factory, ...).
    """

    def __init__(self, *args: Any, interpreter_factory: Callable[[], Any] = LocalInterpreter, **kwargs: Any):
        super().__init__(*args, interpreter_factory=interpreter_factory, **kwargs)

    def pass_through(self, tool: object) -> bool:
        """OwlTool objects as they are (callable by position or name); other tools as dspy wraps them."""
        return isinstance(tool, OwlTool)


class _TracedRLM(RLM):
    """RLM that reports each iteration (reasoning, code, output as the model saw it) to a callback."""

    def __init__(self, *args: Any, on_iteration: Callable[[int, dict, int], None] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.on_iteration = on_iteration

    def iteration_done(self, iteration: int, entry: dict) -> None:
        """Report the iteration's entry to the callback."""
        if self.on_iteration is not None:
            self.on_iteration(iteration, entry, self.max_output_chars)


def run(task: str, memory: Memory | None = None, prompt: str | None = None, ontology: str | Path | Graph | None = None,
        config: RunConfig | None = None, **options: Any) -> RunResult:
    """Run one strict-RLM agent on `task` with capped tools; returns answer, trajectory path and metrics.

    `config` is a RunConfig (model/runs.py: LM, condition, budgets, iterations, sandbox, trajectory folder, context
    layers, guide); its fields may also be given as keywords (`lm=..., condition="A1"`), which win over `config`.
    Conditions (docs/ablations.md, model.MemoryAccess): A0 no memory; A1 a quota of items retrieved by the task's text
    and applicability (title, summary, <= 3 content bullets) appended to the task; A2 memory tools only; A3 A2 plus a
    hint of <= 300 characters (best item's title and action schema); A4 negative control: uncapped tools (whole item
    content, all query rows) and the prompt text in the inputs; A5 memory as plain read-only files (list, read
    windows, grep). The layers are the same in every condition, so only memory access differs.
    """
    config = RunConfig.of(config, **options)
    if not isinstance(task, str) or not task.strip():
        raise ConfigError("the task is empty; pass the question or instruction the agent should solve")
    if memory is not None:
        memory.require_writable()  # the run stores its trace there: refuse before any LM call
    lm, factory = _lm(config, config.lm), interpreter_factory(config.sandbox)
    if isinstance(lm, ReplayLM):  # a replay answers with the query recorded for this task (agent/replay.py)
        lm = lm.for_task(config.task_id, task)
    graph = load_graph(ontology) if ontology is not None else None
    box = Toolbox(memory, prompt, graph, _budget(config), access=config.access)
    box.constraints = query_constraints(memory, graph, config.access)
    injected = retrieve(memory, task, graph, config.access, config.task_id, config.task_type,
                        endpoint_vocabularies(memory, config.endpoints))
    injected = prepare_endpoints(box, config.endpoints, memory, injected)
    packed = context.build(config.layers, graph, memory if config.access.layers_read_memory else None, config.guide,
                           config.budgets, endpoints=granted_urls(box))
    run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    path = trajectory_folder(config.trajectory_dir, memory) / f"{run_id}.jsonl"
    with Trajectory(path, run_id) as traj:
        box.observer = traj.write
        session = _Session(task, config, lm, factory, memory, graph, box, traj, injected, packed)
        return remember_endpoints(box, session.execute())


class _Session:
    """One run once its toolbox and trajectory exist: the RLM call, its events and its result."""

    def __init__(self, task: str, config: RunConfig, lm: dspy.BaseLM, factory: Callable[[], Any],
                 memory: Memory | None, graph: Graph | None, box: Toolbox, traj: Trajectory, retrieval: Retrieval,
                 packed: list[context.Layer]):
        self.task, self.config, self.lm, self.factory, self.memory = task, config, lm, factory, memory
        self.graph, self.box, self.traj, self.retrieval, self.packed = graph, box, traj, retrieval, packed
        self.brief = _ontology_brief(graph)
        self.sub_lm = _lm(config, config.sub_lm) if config.sub_lm is not None else None
        self.injected: list[Hit] = []  # what the task shows, set by inputs()
        self.injected_ref: str | None = None  # blob key of the text A1 / A3 showed, set by inputs()
        self.stdout_chars = 0

    def execute(self) -> RunResult:
        """Run the RLM; write run_complete (also when the LM or interpreter fails: then the exception carries the
        run's metrics, see metrics.spent, and is re-raised)."""
        inputs = self.inputs()
        self.start()
        before, sub_before, t0 = calls_before(self.lm), calls_before(self.sub_lm), time.monotonic()
        try:
            with dspy.context(lm=self.lm, disable_history=False):
                pred = self.rlm(inputs)(**inputs)
        except Exception as e:  # the LM or the interpreter failed: the run's record is written, then it is re-raised
            metrics = self.metrics(before, sub_before, inputs, time.monotonic() - t0, self.traj.iteration, False)
            self.traj.write(RunComplete("error", None, metrics, tuple(self.used()),
                                        error=f"{type(e).__name__}: {str(e)[:300]}"))
            note_spent(e, metrics, self.traj.path)
            raise
        iterations = len(pred.trajectory)
        extracted = pred.final_reasoning == "Extract forced final output"
        metrics = self.metrics(before, sub_before, inputs, time.monotonic() - t0, iterations, not extracted)
        used = self.used()
        self.traj.write(RunComplete("extracted" if extracted else "ok", str(pred.answer), metrics, tuple(used)))
        trace = self.memory.blobs.put(self.traj.path.read_text(encoding="utf-8"), "trace").key \
            if self.memory is not None else None
        query = answering_query(self.traj.events)
        return RunResult(str(pred.answer), self.traj.path, self.traj.run_id, metrics, trace, tuple(used),
                         self.usage(), self.retrieval.filtered, query.as_answer() if query else None,
                         self.injected_ref)

    def used(self) -> list[str]:
        """Ids of the items the run was shown up front or met through its tools, in that order."""
        return list(dict.fromkeys([i.id for i in self.injected] + self.box.memory_ids_used))

    def inputs(self) -> dict[str, Any]:
        """The RLM's inputs: the task (plus A1's text or A3's hint), the prompt's handle, the ontology's size, the
        context layers; A4 adds the prompt text."""
        box, access = self.box, self.config.access
        handle = box.prompt.to_dict() if box.prompt else {}
        if access.prompt_text and box.prompt is not None:  # the negative control hands the model the prompt text
            handle = {**handle, "text": box.blobs.load(box.prompt)}
        hint, hinted = hint_text(self.memory, self.retrieval, access)
        block, shown = experience(self.memory, self.retrieval, access, self.config.budgets.get("L2"))
        self.injected = hinted + shown
        if self.memory is not None and (hint or block):  # kept as a blob, so records name it without holding it
            self.injected_ref = self.memory.blobs.put(hint + block, "prompt").key
        return {"task": self.task + hint, "prompt": handle, "ontology": self.brief.to_dict() if self.brief else {},
                **({FIELD: block} if block else {}), **context.inputs(self.packed)}

    def start(self) -> None:
        """The run_start event: task, handles, injected and filtered ids and the configuration (no payload)."""
        box, config = self.box, self.config
        settings = RunSettings(config.condition, lm_name(self.lm), config.max_iters, config.max_llm_calls,
                               self.factory.__name__, sub_lm=lm_name(self.sub_lm) if self.sub_lm is not None else None,
                               max_tokens=config.max_tokens, timeout=config.timeout, max_read=box.budget.max_read,
                               max_output_chars=config.max_output_chars,
                               read_budget=box.budget.total_chars, task_id=config.task_id,
                               k=config.k.to_json() if config.access.text else None, budgets=config.budgets,
                               tools=box.tool_names(),
                               layers=tuple(x.brief() for x in self.packed))
        self.traj.write(RunStart(self.task, box.prompt, self.brief, tuple(i.id for i in self.injected),
                                 self.retrieval.filtered, settings))

    def rlm(self, inputs: dict[str, Any]) -> _TracedRLM:
        """The traced RLM over the toolbox, with one input field per context layer (and A1's prior experience)."""
        layer_fields = "".join(f", {name}: str" for name in inputs if name not in ("task", "prompt", "ontology"))
        sig = dspy.Signature(f"task: str, prompt: dict, ontology: dict{layer_fields} -> answer: str", INSTRUCTIONS)
        c = self.config
        return _TracedRLM(sig, max_iters=c.max_iters, max_llm_calls=c.max_llm_calls,
                          max_output_chars=c.max_output_chars, tools=self.box.functions(), sub_lm=self.sub_lm,
                          interpreter_factory=self.factory, on_iteration=self.on_iteration)

    def on_iteration(self, i: int, entry: dict, cap: int) -> None:
        """Write one iteration event with the output exactly as the model saw it."""
        seen = format_output(entry.get("output", ""), cap).split("\n", 1)[1]
        self.stdout_chars += len(seen)
        self.traj.iteration = i + 1
        self.traj.write(Iteration(i, entry.get("reasoning", ""), entry.get("code", ""), seen,
                                  len(entry.get("output", ""))))

    def metrics(self, before: set[int], sub_before: set[int], inputs: dict[str, Any], elapsed: float, iterations: int,
                converged: bool) -> RunMetrics:
        """Counts, tokens, cost and leakage measured on the LM calls of this run (string inputs are allowed)."""
        given = [v for v in inputs.values() if isinstance(v, str)]
        sub = calls_since(self.sub_lm, sub_before) if self.sub_lm is not None and self.sub_lm is not self.lm else []
        return run_metrics(self.box, calls_since(self.lm, before), given, iterations, elapsed, self.stdout_chars,
                           converged=converged, sub_calls=sub)

    def usage(self) -> tuple[MemoryUse, ...]:
        """Every used item with its rank and score: the injected items' ranks first, then what the tools met."""
        seen = {i.id: (rank, i.score) for rank, i in enumerate(self.injected, 1)}
        for i, rs in self.box.memory_usage.items():
            seen.setdefault(i, rs)
        return tuple(MemoryUse(i, r, sc) for i, (r, sc) in seen.items())


def _lm(config: RunConfig, lm: object) -> dspy.BaseLM:
    """An LM of the run (its main or sub-LM) with the run's token limit and timeout."""
    return resolve_lm(lm, config.api_base, config.max_tokens, config.timeout)


def _budget(config: RunConfig) -> ReadBudget | None:
    """The run's ReadBudget from the config's read limits, or None (the toolbox's default) when it sets none."""
    if config.read_budget is None and config.reads_per_handle is None and config.max_read is None:
        return None
    default = ReadBudget()
    return ReadBudget(default.total_chars if config.read_budget is None else config.read_budget,
                      default.reads_per_handle if config.reads_per_handle is None else config.reads_per_handle,
                      default.max_read if config.max_read is None else config.max_read)


def _ontology_brief(graph: Graph | None) -> OntologyBrief | None:
    """What the model is told about the ontology up front: its IRIs and size, never its text (None without one)."""
    if graph is None:
        return None
    iris = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Ontology))
    return OntologyBrief(tuple(iris[:3]), len(graph))

