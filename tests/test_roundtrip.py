"""Payloads come back character for character through every window: NUL, lone surrogates, astral characters."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from owl_memory import ItemSpec, Memory
from owl_memory.agent.tools import Toolbox
from owl_memory.agent.trajectory import Trajectory, read_trajectory
from owl_memory.model import Iteration
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
def test_memory_content_windows_round_trip(tmp_path_factory, content):
    """An item's content, read back through Memory.window, is the content stored."""
    with Memory(tmp_path_factory.mktemp("m")) as m:
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
