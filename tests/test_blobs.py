"""Blob store: content addressing, capped reads, read budgets, handles that never show payload."""

import pytest

from owl_memory import BlobStore, CapExceeded, ReadBudget, UnknownItem

TEXT = "secret-payload " * 1000


@pytest.fixture
def blobs(tmp_path):
    b = BlobStore(tmp_path / "blobs.sqlite3", max_read=64)
    yield b
    b.close()


def test_content_addressed_and_idempotent(blobs):
    a, b = blobs.put(TEXT, "prompt"), blobs.put(TEXT, "prompt")
    assert a == b and a.key == f"sha256:{a.sha}" and a.size == len(TEXT)
    assert blobs.db.execute("SELECT count(*) FROM blobs").fetchone()[0] == 1


def test_repr_and_str_never_show_payload(blobs):
    ref = blobs.put(TEXT, "prompt")
    for shown in (repr(ref), str(ref), f"{ref}", str([ref])):
        assert "secret" not in shown and len(shown) < 80
    assert "secret" not in str(ref.to_dict())


def test_reads_are_capped_and_windows_exact(blobs):
    ref = blobs.put(TEXT, "trace")
    w = blobs.read(ref, 15, 10 ** 6)
    assert w.to_dict() == {"text": TEXT[15:79], "start": 15, "end": 79, "size": len(TEXT)}
    assert blobs.read(ref.key, -5, 3).text == TEXT[:3]
    assert blobs.read(ref, len(TEXT) + 10, 5).text == ""


def test_budget_limits_total_characters_and_reads_per_handle(blobs):
    ref = blobs.put(TEXT, "prompt")
    budget = ReadBudget(total_chars=100, reads_per_handle=3, max_read=64)
    assert len(blobs.read(ref, 0, 64, budget=budget).text) == 64
    assert len(blobs.read(ref, 64, 64, budget=budget).text) == 36  # only what is left
    with pytest.raises(CapExceeded, match="budget"):
        blobs.read(ref, 128, 10, budget=budget)
    per_handle = ReadBudget(total_chars=10 ** 6, reads_per_handle=2)
    blobs.read(ref, 0, 1, budget=per_handle), blobs.read(ref, 1, 1, budget=per_handle)
    with pytest.raises(CapExceeded, match="read limit"):
        blobs.read(ref, 2, 1, budget=per_handle)


def test_find_returns_offsets_not_text(blobs):
    ref = blobs.put("abc needle def needle", "prompt")
    assert blobs.find(ref, "needle") == [4, 15]
    assert blobs.find(ref, "needle", limit=1) == [4]


def test_unknown_handle_and_bad_kind(blobs):
    with pytest.raises(UnknownItem, match="handle"):
        blobs.read("sha256:" + "0" * 64)
    with pytest.raises(ValueError, match="blob kind"):
        blobs.put("x", "movie")
