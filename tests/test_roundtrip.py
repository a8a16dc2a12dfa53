"""Payloads come back character for character through every window: NUL, lone surrogates, astral characters; trajectory
events come back as they were written."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from owl_memory import ItemSpec, Memory
from owl_memory.agent.tools import Toolbox
from owl_memory.agent.trajectory import SCHEMA_NAME, Trajectory, read_trajectory
from owl_memory.model import (
    AgentQuery,
    CallArgs,
    ConstraintViolation,
    Construction,
    Iteration,
    LayerBrief,
    OntologyBrief,
    Ref,
    RunComplete,
    RunMetrics,
    RunSettings,
    RunStart,
    ToolCall,
    ToolResult,
    sha256,
)
from owl_memory.model.events import EVENTS
from owl_memory.resources import schema
from owl_memory.store.blobs import BlobStore

# Every code point, surrogates included (Python strs may hold lone ones); NUL and astral characters are drawn often.
ANY_TEXT = st.text(st.one_of(st.characters(codec=None, categories=None), st.sampled_from("\x00\ud800\udfff😀é")),
                   max_size=300)
EDGES = ["", "\x00", "a\x00b", "\x00" * 700, "x\ud800y", "\udfff", "\ud83d\ude00", "😀" * 600, "é\x00😀\ud800" * 200]


def read_all(window, size: int, step: int) -> str:
    """Concatenate windows of `step` characters until `size` characters have been read."""
    parts, start = [], 0
    while start < size:
        w = window(start, step)
        assert w["start"] == start and w["end"] == start + len(w["text"]) and len(w["text"]) == min(step, size - start)
        parts.append(w["text"])
        start = w["end"]
    return "".join(parts)


@pytest.fixture(scope="module")
def blobs():
    """One in-memory blob store for the property tests."""
    store = BlobStore(":memory:", max_read=64)
    yield store
    store.close()


@pytest.mark.parametrize("text", EDGES)
def test_blob_windows_return_the_exact_text(blobs, text):
    """Windows of any step, concatenated, equal the text put; load and find agree with Python."""
    ref = blobs.put(text)
    assert ref.size == len(text)
    for step in (1, 7, 64):
        assert read_all(lambda s, n: blobs.read(ref, s, n).to_dict(), ref.size, step) == text
    assert blobs.load(ref) == text
    assert blobs.find(ref, "\x00", limit=5) == [i for i, c in enumerate(text) if c == "\x00"][:5]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=ANY_TEXT, start=st.integers(0, 320), length=st.integers(0, 80))
def test_any_window_of_any_text_is_the_python_slice(blobs, text, start, length):
    """blob.read(start, length) is text[start:start+min(length, max_read)], for any string."""
    ref = blobs.put(text)
    w = blobs.read(ref, start, length)
    begin = min(start, len(text))
    assert w.text == text[begin:begin + min(length, 64)]
    assert (w.start, w.size) == (begin, len(text))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=ANY_TEXT.filter(str.strip))
def test_memory_content_windows_round_trip(tmp_path_factory, fresh_memory, content):
    """An item's content, read back through Memory.window, is the content stored."""
    with Memory(fresh_memory(tmp_path_factory.mktemp("m") / "m")) as m:
        i = m.add(ItemSpec("Principle", "Exact payloads", "Use when payloads hold odd characters.", content))
        assert read_all(lambda s, n: m.window(i, s, n).to_dict(), m.get(i).size, 97) == content


@pytest.mark.parametrize("prompt", EDGES[1:])
def test_prompt_windows_round_trip(prompt):
    """The agent's prompt_window tool returns the hidden prompt exactly, NUL or not."""
    box = Toolbox(prompt=prompt)
    assert read_all(box.prompt_window, len(prompt), 50) == prompt


@pytest.mark.parametrize("text", EDGES)
def test_trajectory_lines_round_trip(tmp_path, text):
    """A trajectory event holding any string is written as UTF-8 JSON and read back equal.

    A high surrogate followed by a low one is the exception JSON defines: it reads back as the pair's character.
    """
    with Trajectory(tmp_path / "t.jsonl", "run-1") as t:
        t.write(Iteration(0, text, text, text, len(text)))
    (event,) = read_trajectory(tmp_path / "t.jsonl")
    expected = "😀" if text == "\ud83d\ude00" else text
    assert isinstance(event, Iteration) and event.reasoning == event.code == event.output == expected
    (tmp_path / "t.jsonl").read_text(encoding="utf-8")  # valid UTF-8 on disk


# written by the writer before events were typed; endpoint-queries (agent_query events) and memory-note by the typed
# writer
TRAJECTORIES = Path(__file__).parent / "data" / "trajectories"


@pytest.mark.parametrize("name", ["tools-constraint-layers", "a1-quota", "lm-failure", "agentic-sprint",
                                  "endpoint-queries", "memory-note"])
def test_trajectory_files_read_typed_and_write_back_byte_for_byte(name):
    """Files the earlier dict writer wrote read back as typed events whose lines are those files' bytes."""
    path = TRAJECTORIES / f"{name}.jsonl"
    events = read_trajectory(path)
    lines = [json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in events]
    assert "".join(lines) == path.read_text(encoding="utf-8")
    assert isinstance(events[0], RunStart) and isinstance(events[-1], RunComplete)


def test_the_trajectory_fixtures_hold_every_kind_of_event():
    """The byte-compatibility files above cover each kind a trajectory line may be."""
    kinds = {e.kind for path in TRAJECTORIES.glob("*.jsonl") for e in read_trajectory(path)}
    assert kinds == set(EVENTS) == set(schema(SCHEMA_NAME)["properties"]["event"]["enum"])


def test_every_kind_of_event_reads_back_as_written(tmp_path):
    """Each kind of event, written (stamped) and read back, is the same typed value."""
    metrics = RunMetrics(iterations=2, lm_calls=3, cost_usd=None, payload_chars_by_source={"prompt": 4})
    ref = Ref("sha256:" + "a" * 64, "prompt", 5, "a" * 64)
    settings = RunSettings("A1", "scripted", 12, 20, "LocalInterpreter", k="2+1+1", budgets={"L2": 800},
                           tools=("prompt_window",), layers=(LayerBrief("L0", 120, 600, 1),), max_output_chars=900)
    events = [RunStart("task \x00😀", ref, OntologyBrief(("http://example.org/o",), 9), ("a" * 16,), ("b" * 16,),
                       settings),
              Iteration(0, "why", "print(1)", "1", 1),
              ToolCall("prompt_window", CallArgs((0,), {"length": {"clipped": "x…", "chars": 500}})),
              ToolResult("prompt_window", 40, True, (), "[Error] prompt_window: no"),
              Construction("cq_check", {"passed": True, "signatures": {"s": 2}}),
              ConstraintViolation("ontology_query", "c" * 16, "the query needs a LIMIT"),
              RunComplete("error", None, metrics, ("a" * 16,), error="RuntimeError: down"),
              RunComplete("ok", "an answer", metrics),
              AgentQuery("endpoint_query", "http://127.0.0.1:9/q", "ASK {}", sha256("ASK {}"), ask=True),
              AgentQuery("ontology_query", "ontology", "SELECT", sha256("SELECT"), error="syntax", message="no")]
    with Trajectory(tmp_path / "t.jsonl", "run-1") as t:
        t.iteration = 3
        written = [t.write(e) for e in events]
    read = read_trajectory(tmp_path / "t.jsonl")
    assert read == written and [e.seq for e in read] == list(range(len(events)))
    assert {e.run_id for e in read} == {"run-1"}
    assert read[2].iteration == read[3].iteration == 3  # tool events carry the iteration they were called in
    assert "error" in read[6].to_dict() and "error" not in read[7].to_dict()
    assert read[8].iteration == 3 and read[0].config.max_output_chars == 900
