"""The strict-RLM runner: one dspy.RLM run over capped tools, with a validated trajectory and measured leakage.

The prompt never enters the model's context: the RLM's inputs carry only its handle (ref, kind, size, sha).
By default generated code runs in dspy's LocalInterpreter, a local Python subprocess that is NOT a sandbox
(it has your files, network and credentials); `sandbox=True` runs it under bubblewrap instead (agent/sandbox.py).
Tools take positional or keyword arguments under both: see RLM for why dspy.RLM needs help on LocalInterpreter.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import dspy

from ..errors import ConfigError
from ..model import Hit, Item
from ..rdfio import load_graph
from ..store.blobs import ReadBudget
from ..vocab import OWL, RDF
from . import context
from .conditions import CONDITIONS, TOOL_CONDITIONS
from .dspy_compat import HookedRLM, LocalInterpreter, format_output
from .leakage import measure
from .scripted import SCRIPTED, scripted_lm
from .tools import OwlTool, Toolbox, clip

HINT_CHARS = 300  # A3's packed hint
BULLETS, BULLET_CHARS = 3, 160  # A1: bullets per injected item, characters per bullet
LM_ENV = "OWL_MEMORY_LM"
INSTRUCTIONS = """Solve `task`. The prompt text is NOT in your variables: `prompt` holds only its handle
(ref, size, sha). Read it in small windows with prompt_window / prompt_find; explore the ontology with the
ontology_* tools (ontology_query returns a results handle: read rows with results_peek); search procedural memory
with memory_search / memory_get when those tools exist. Every read is capped and the run has a read budget, so
print only what you need. Tools accept positional or keyword arguments; a result starting with [Error] says what
to do instead. SUBMIT(answer) when done."""


@dataclass
class RunResult:
    """What one run produced.

    Args:
        answer: the submitted (or extracted) answer.
        trajectory_path: the run's JSONL trajectory.
        memory_ids_used: memory items injected (A1, A3's hint) or read through tools (A2-A4).
        metrics: iterations, LM calls, tokens, tool calls and leakage numbers.
        run_id: the run's id (also on every trajectory line).
        trace_ref: blob key of the trajectory, when the run had a memory.
        memory_usage: [{memory_id, rank, score}] for every item used (search rank and score; A1 injection rank).
        judgment: the learning loop's Judgment (run with learn=True), else None.
        extracted: ids of the items the loop extracted and stored from this run.
        consolidation: the loop's per-run report (added, duplicates, merged, conflicts, exceptions, ...).
    """

    answer: str
    trajectory_path: Path
    memory_ids_used: list[str] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    run_id: str = ""
    trace_ref: str | None = None
    memory_usage: list[dict] = field(default_factory=list)
    judgment: object = None
    extracted: list[str] = field(default_factory=list)
    consolidation: dict = field(default_factory=dict)


def resolve_lm(lm=None, api_base: str | None = None):
    """A DSPy LM from an LM object, a model string, or $OWL_MEMORY_LM; ConfigError naming --lm when none."""
    lm = lm if lm is not None else os.environ.get(LM_ENV) or None
    if lm is None:
        raise ConfigError(f"no LM given: pass --lm MODEL (any DSPy/litellm model string, e.g. openai/gpt-4o-mini) "
                          f"or set {LM_ENV}")
    if not isinstance(lm, str):
        return lm
    if lm == SCRIPTED:
        return scripted_lm()
    kwargs = {"api_base": api_base} if api_base else {}
    if api_base and lm.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
        kwargs["api_key"] = "local-server"  # OpenAI-compatible local servers (Ollama, vLLM, llama.cpp) take any key
    try:
        return dspy.LM(lm, cache=False, engine="litellm", **kwargs)
    except ValueError as e:
        raise ConfigError(f"bad LM model string {lm!r}: {e}; use provider/model, e.g. openai/gpt-4o-mini") from e


def interpreter_factory(sandbox=False):
    """dspy's LocalInterpreter (not a sandbox); with sandbox=True a bubblewrap Sandbox (or the Sandbox given)."""
    if not sandbox:
        return LocalInterpreter
    from .sandbox import Sandbox

    return sandbox if isinstance(sandbox, Sandbox) else Sandbox()


class RLM(HookedRLM):
    """dspy.RLM whose interpreter passes positional arguments on to OwlTool tools (any interpreter).

    dspy 3.4.1 wraps each tool as `invoke(**kwargs)` before LocalInterpreter sees it, so `prompt_window(0, 50)`
    fails there whatever the tool accepts (the bubblewrap Sandbox speaks the same protocol); Deno's
    PythonInterpreter binds positional arguments in its stubs, so plain dspy.RLM takes both styles there.
    """

    def pass_through(self, tool) -> bool:
        """OwlTool objects as they are (callable by position or name); other tools as dspy wraps them."""
        return isinstance(tool, OwlTool)


class _TracedRLM(RLM):
    """RLM that reports each iteration (reasoning, code, output as the model saw it) to a callback."""

    def __init__(self, *args, on_iteration=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.on_iteration = on_iteration

    def iteration_done(self, iteration: int, entry: dict) -> None:
        """Report the iteration's entry to the callback."""
        if self.on_iteration is not None:
            self.on_iteration(iteration, entry, self.max_output_chars)


def run(task: str, memory=None, prompt: str | None = None, ontology=None, lm=None, condition: str = "A2",
        max_iters: int = 12, max_llm_calls: int = 20, *, api_base: str | None = None, budget: ReadBudget | None = None,
        k: int = 1, sandbox=False, trajectory_dir: str | Path | None = None,
        max_output_chars: int = 4_000, learn: bool = False, expect: dict | None = None,
        task_type: str | None = None, task_id: str | None = None, matts: str | None = None,
        extract_lm=None, max_extract: int | None = None, layers=(), guide: str | Path | None = None) -> RunResult:
    """Run one strict-RLM agent on `task` with capped tools; returns answer, trajectory path and metrics.

    learn=True (or matts="parallel:K" / "sequential:K") runs the learning loop: the run is judged (by `expect`
    gold, else by the LM), items are extracted, consolidated and stored with provenance, and the result carries
    `judgment`, `extracted` and `consolidation` (see owl_memory.learning.loop); at most `max_extract` items are
    extracted per run (default 3; MaTTS: at most 5).
    layers=("L0", "L1", "L3") gives the model bounded context layers as input variables (agent/context.py; L3
    summarizes `guide`); the same layers in every condition, so only memory access differs.
    Conditions (DESIGN.md §8): A0 no memory; A1 the top-k items (title, summary, <= 3 content bullets) appended to
    the task; A2 memory tools only; A3 A2 plus a hint of <= 300 characters (best item's title and action schema);
    A4 negative control: uncapped tools (whole item content, all query rows) and the prompt text in the inputs.
    """
    if learn or matts:
        from ..learning.loop import run_learning

        return run_learning(task, memory, expect=expect, ontology=ontology, lm=lm, condition=condition,
                            task_type=task_type, task_id=task_id, matts=matts, extract_lm=extract_lm,
                            max_extract=max_extract, api_base=api_base, prompt=prompt, max_iters=max_iters,
                            max_llm_calls=max_llm_calls, budget=budget, k=k, sandbox=sandbox,
                            trajectory_dir=trajectory_dir, max_output_chars=max_output_chars, layers=layers,
                            guide=guide)
    if condition not in CONDITIONS:
        raise ConfigError(f"condition {condition!r} is not one of {', '.join(CONDITIONS)}")
    if not isinstance(task, str) or not task.strip():
        raise ConfigError("the task is empty; pass the question or instruction the agent should solve")
    lm, factory = resolve_lm(lm, api_base), interpreter_factory(sandbox)
    graph = load_graph(ontology) if ontology is not None else None
    box = Toolbox(memory if condition in TOOL_CONDITIONS else None, prompt, graph, budget,
                  blobs=memory.blobs if memory is not None else None, uncapped=condition == "A4")
    injected = _inject(memory, task, graph, {"A1": k, "A3": 1}.get(condition, 0))
    packed = context.build(layers, graph, memory if condition != "A0" else None, guide)
    run_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    from .trajectory import Trajectory

    path = _trajectory_dir(trajectory_dir, memory) / f"{run_id}.jsonl"
    with Trajectory(path, run_id) as traj:
        box.observer = traj.observe
        return _run(task, box, lm, factory, traj, injected, condition, max_iters, max_llm_calls, max_output_chars,
                    memory, graph, packed)


def _run(task, box, lm, factory, traj, injected, condition, max_iters, max_llm_calls, max_output_chars, memory,
         graph, packed) -> RunResult:
    """The run proper, once the toolbox and trajectory exist."""
    task_text = task + _memory_text(memory, injected, condition)
    handle = box.prompt.to_dict() if box.prompt else {}
    if condition == "A4" and box.prompt is not None:  # the negative control hands the model the prompt text
        handle = {**handle, "text": box.blobs.load(box.prompt)}
    inputs = {"task": task_text, "prompt": handle,
              "ontology": _ontology_info(graph), **context.inputs(packed)}
    traj.write("run_start", task=task, prompt=box.prompt.to_dict() if box.prompt else None,
               ontology=inputs["ontology"] or None, memory_ids_injected=[i.id for i in injected],
               config={"condition": condition, "lm": str(getattr(lm, "model", type(lm).__name__)),
                       "max_iters": max_iters, "max_llm_calls": max_llm_calls, "interpreter": factory.__name__,
                       "max_read": box.budget.max_read, "read_budget": box.budget.total_chars,
                       "tools": [f.__name__ for f in box.functions()],
                       "layers": [layer.to_dict() for layer in packed]})
    stdout = [0]

    def on_iteration(i, entry, cap):
        seen = format_output(entry.get("output", ""), cap).split("\n", 1)[1]
        stdout[0] += len(seen)
        traj.iteration = i + 1
        traj.write("iteration", iteration=i, reasoning=entry.get("reasoning", ""), code=entry.get("code", ""),
                   output=seen, output_chars=len(entry.get("output", "")))

    layer_fields = "".join(f", {name}: str" for name in context.inputs(packed))
    sig = dspy.Signature(f"task: str, prompt: dict, ontology: dict{layer_fields} -> answer: str", INSTRUCTIONS)
    rlm = _TracedRLM(sig, max_iters=max_iters, max_llm_calls=max_llm_calls, max_output_chars=max_output_chars,
                     tools=box.functions(), interpreter_factory=factory, on_iteration=on_iteration)
    before, t0 = _seen(lm), time.monotonic()
    try:
        with dspy.context(lm=lm, disable_history=False):
            pred = rlm(**inputs)
    except Exception as e:
        calls = _new_calls(lm, before)
        metrics = _metrics(box, calls, stdout[0], inputs, time.monotonic() - t0, traj.iteration)
        traj.write("run_complete", status="error", error=f"{type(e).__name__}: {str(e)[:300]}", answer=None,
                   **_counts(calls, traj.iteration), metrics=metrics, memory_ids_used=box.memory_ids_used)
        raise
    calls = _new_calls(lm, before)
    iterations = len(pred.trajectory)
    metrics = _metrics(box, calls, stdout[0], inputs, time.monotonic() - t0, iterations)
    extracted = pred.final_reasoning == "Extract forced final output"
    used = list(dict.fromkeys([i.id for i in injected] + box.memory_ids_used))
    traj.write("run_complete", status="extracted" if extracted else "ok", answer=str(pred.answer),
               **_counts(calls, iterations), metrics=metrics, memory_ids_used=used)
    trace_ref = memory.blobs.put(traj.path.read_text(encoding="utf-8"), "trace").key if memory is not None else None
    return RunResult(str(pred.answer), traj.path, used, metrics, traj.run_id, trace_ref, _usage(injected, box))


def _usage(injected: list[Hit], box: Toolbox) -> list[dict]:
    """Every used item with its rank and score: A1's injected ranks first, then what the tools met."""
    seen = {i.id: (rank, i.score) for rank, i in enumerate(injected, 1)}
    for i, rs in box.memory_usage.items():
        seen.setdefault(i, rs)
    return [{"memory_id": i, "rank": r, "score": sc} for i, (r, sc) in seen.items()]


def _seen(lm) -> set:
    """Identities of the LM history entries that exist before the run."""
    return {id(e) for e in getattr(lm, "history", None) or []}


def _new_calls(lm, before: set) -> list[dict]:
    """The LM history entries this run added (dspy keeps a bounded list, so compare identities, not indexes)."""
    return [e for e in getattr(lm, "history", None) or [] if id(e) not in before]


def _metrics(box: Toolbox, calls: list[dict], stdout_chars: int, inputs: dict, elapsed: float,
             iterations: int) -> dict:
    """Run metrics: counts, tokens and leakage measured on the LM calls of this run (string inputs are allowed)."""
    payloads = [(ref.kind, box.load(ref)) for ref in box.payloads]
    given = [v for v in inputs.values() if isinstance(v, str)]
    leak = measure(calls, payloads, allowed=[*given, *sorted(box.vocabulary)])
    return {**_counts(calls, iterations), **leak, "large_returns": box.stats["large_returns"],
            "max_window": box.stats["max_window"], "max_return": box.stats["max_return"], "stdout_chars": stdout_chars,
            "tool_calls": box.stats["tool_calls"], "tool_errors": box.stats["tool_errors"],
            "read_chars": box.budget.spent, "seconds": round(elapsed, 3)}


def _counts(calls: list[dict], iterations: int) -> dict:
    """Iterations, LM calls and prompt/completion tokens from LM history entries."""
    def tokens(key):
        return sum(int((c.get("usage") or {}).get(key) or 0) for c in calls)

    return {"iterations": iterations, "lm_calls": len(calls), "prompt_tokens": tokens("prompt_tokens"),
            "completion_tokens": tokens("completion_tokens")}


def _inject(memory, task: str, graph, k: int) -> list[Hit]:
    """The top-k applicable items for the task (A1's injection, A3's hint), ontology-scoped first."""
    if memory is None or k < 1:
        return []
    iris = [str(s) for s in graph.subjects(RDF.type, OWL.Ontology)] if graph is not None else []
    hits = memory.search(text=task, ontology=iris[0], k=k) if iris else []
    return hits or memory.search(text=task, k=k)


def _memory_text(memory, injected: list[Hit], condition: str) -> str:
    """What the task gets appended: A1 each item's title, summary and <= 3 bullets; A3 the packed hint."""
    if not injected:
        return ""
    if condition == "A3":
        return "\n\nMemory hint: " + _hint(memory.get(injected[0].id))
    blocks = []
    for i in injected:
        bullets = _bullets(memory.blobs.load(memory.get(i.id).content_ref))
        blocks.append(f"- [{i.kind}] {clip(i.title, 80)}: {clip(i.summary, 200)} (id {i.id})" +
                      "".join(f"\n  * {b}" for b in bullets))
    return "\n\nRelevant memory:\n" + "\n".join(blocks)


def _hint(item: Item) -> str:
    """A3's hint: the item's title and compiled action schema (compact JSON), at most HINT_CHARS characters."""
    schema = item.action_schema
    text = f"{item.title} (id {item.id})"
    if schema:
        text += " action: " + json.dumps(schema.to_json(), separators=(",", ":"), ensure_ascii=False)
    return clip(text, HINT_CHARS)


def _bullets(content: str) -> list[str]:
    """Up to BULLETS lines of an item's content (its bulleted lines when it has any), each clipped."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    marked = [line.lstrip("-*• ").strip() for line in lines if line[:1] in "-*•"]
    return [clip(line, BULLET_CHARS) for line in (marked or lines)[:BULLETS]]


def _ontology_info(graph) -> dict:
    """What the model is told about the ontology up front: its IRI and size, never its text."""
    if graph is None:
        return {}
    iris = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Ontology))
    return {"ontology": iris[:3], "triples": len(graph)}


def _trajectory_dir(where, memory) -> Path:
    """Where trajectories go: the given folder, else <memory>/runs, else ./.owl-memory/runs."""
    if where is not None:
        return Path(where)
    local = memory is not None and not str(memory.location).startswith(("http://", "https://"))
    return (Path(memory.location) if local else Path(".owl-memory")) / "runs"
