"""Many processes on one embedded memory: parallel writers lose nothing, readers never fail, locks are named."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

import pytest

from owl_memory import ItemSpec, Memory
from owl_memory.errors import MemoryLocked, MemoryNotFound

WRITERS, READERS, ADDS = 4, 4, 250


def _fork(job, *args) -> int:
    """Run job(*args) in a forked child that exits 0 on success, 1 with a traceback in `<out>.err` otherwise."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            job(*args)
        except BaseException:
            Path(f"{args[-1]}.err").write_text(traceback.format_exc())
            code = 1
        os._exit(code)
    return pid


def _spec(w: int, n: int) -> ItemSpec:
    """Writer w's n-th item."""
    return ItemSpec("Principle", f"writer {w} lesson {n}", f"Use when writer {w} learns lesson {n}.",
                    f"content {w}-{n}", applies_to=(f"http://example.org/w{w}#",), task_types=("drill",),
                    tags=(f"w{w}",))


def _writer(path: Path, w: int, out: Path) -> None:
    """Add ADDS items, writing each returned id to `out` after add returns."""
    with Memory(path) as m, out.open("w") as f:
        for n in range(ADDS):
            f.write(m.add(_spec(w, n)) + "\n")
            f.flush()


def _reader(path: Path, stop: Path, out: Path) -> None:
    """Search until `stop` exists; writes how many searches ran and the most items any of them saw."""
    searches, seen = 0, set()
    with Memory(path, create=False) as m:
        while not stop.exists():
            for hit in m.search("lesson", task_type="drill", k=50):
                seen.add(hit.id)
            m.window(hit.id) if seen else None
            searches += 1
            time.sleep(0.02)
        final = len(m)
    out.write_text(f"{searches} {len(seen)} {final}")


def _wait(pid: int) -> int:
    """Exit code of a child."""
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_four_writers_and_four_readers_lose_nothing(tmp_path):
    path = tmp_path / "mem"
    Memory(path).close()
    stop = tmp_path / "stop"
    readers = [_fork(_reader, path, stop, tmp_path / f"r{r}") for r in range(READERS)]
    writers = [_fork(_writer, path, w, tmp_path / f"w{w}") for w in range(WRITERS)]
    codes = [_wait(p) for p in writers]
    stop.touch()
    codes += [_wait(p) for p in readers]
    errors = [f.read_text() for f in tmp_path.glob("*.err")]
    assert codes == [0] * (WRITERS + READERS), errors
    returned = {i for w in range(WRITERS) for i in (tmp_path / f"w{w}").read_text().split()}
    assert returned == {_spec(w, n).id for w in range(WRITERS) for n in range(ADDS)}
    for r in range(READERS):
        searches, seen, final = map(int, (tmp_path / f"r{r}").read_text().split())
        assert searches > 0 and seen > 0 and final == WRITERS * ADDS  # each reader saw the others' commits
    with Memory(path, create=False) as m:
        assert len(m) == WRITERS * ADDS
        assert all(m.get(i).id == i for i in returned)
        assert len(m.search(task_type="drill", k=50)) == 50
        assert m.validate().conforms


def _hold_lock(path: Path, seconds: float, out: Path) -> None:
    """Hold the memory's write lock for `seconds`, after announcing it in `out`."""
    with Memory(path) as m, m.backend.transaction():
        m.backend.lock.path.with_name("held").touch()
        time.sleep(seconds)
    out.write_text("done")


def test_a_writer_waits_then_names_the_holder_while_readers_go_on(tmp_path, monkeypatch):
    path = tmp_path / "mem"
    with Memory(path) as m:
        first = m.add(ItemSpec("Principle", "Bind values", "Use when a query takes user text.", "never paste"))
    pid = _fork(_hold_lock, path, 3.0, tmp_path / "holder")
    while not (path / "held").exists():
        time.sleep(0.01)
    monkeypatch.setenv("OWL_MEMORY_LOCK_WAIT", "0.3")
    with Memory(path, create=False) as m:
        assert [h.id for h in m.search("bind")] == [first]  # reading while another process writes
        assert m.get(first).title == "Bind values"
        started = time.monotonic()
        with pytest.raises(MemoryLocked) as e:
            m.add(ItemSpec("Principle", "Other", "Use when other.", "other"))
        assert 0.3 <= time.monotonic() - started < 2.0
    assert f"pid {pid}" in str(e.value) and "OWL_MEMORY_LOCK_WAIT" in str(e.value)
    monkeypatch.setenv("OWL_MEMORY_LOCK_WAIT", "30")
    with Memory(path) as m:  # a writer with a longer wait gets the lock once the holder is done
        m.add(ItemSpec("Principle", "Other", "Use when other.", "other"))
        assert len(m) == 2
    assert _wait(pid) == 0


def test_a_missing_memory_is_not_created_by_readers(tmp_path):
    path = tmp_path / "typo"
    with pytest.raises(MemoryNotFound, match="no memory at"):
        Memory(path, create=False)
    assert not path.exists()
    with Memory(path) as m:
        assert len(m) == 0
    Memory(path, create=False).close()


def _create_and_add(path: Path, out: Path) -> None:
    """Create a memory and add items until killed, writing each id to `out` once add has returned."""
    with Memory(path) as m, out.open("w") as f:
        for n in range(1000):
            f.write(m.add(ItemSpec("Procedure", f"step {n}", f"Use when step {n} is due.", f"do step {n}")) + "\n")
            f.flush()


def _calibrate(path: Path) -> tuple[float, float]:
    """Seconds until a new memory exists (memory.sqlite3 renamed into place) and until its first add returned, on
    this machine now (the kill drill scales to both)."""
    out = path.with_suffix(".ids")
    started, created = time.monotonic(), None
    pid = _fork(_create_and_add, path, out)
    while not (out.exists() and out.read_text().strip()):
        if created is None and (path / "memory.sqlite3").exists():
            created = time.monotonic() - started
        time.sleep(0.002)
    elapsed = time.monotonic() - started
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return created or elapsed, elapsed


def test_kill_9_at_any_moment_leaves_no_memory_or_one_that_opens_with_every_returned_write(tmp_path):
    import random
    import signal

    created, first_write = _calibrate(tmp_path / "calibration")
    rng, outcomes = random.Random(20261123), {"none": 0, "opens": 0}
    for trial in range(50):
        path, out = tmp_path / f"m{trial}", tmp_path / f"ids{trial}"
        pid = _fork(_create_and_add, path, out)
        # even trials sweep 0 .. 1.2x this machine's creation time (most land inside creation), odd ones 0 .. 1.6x
        # creation + first add: the share inside creation no longer depends on how creation compares to an add
        span = created * 1.2 if trial % 2 == 0 else first_write * 1.6
        time.sleep(span * (trial // 2 + rng.random()) / 25)
        os.kill(pid, signal.SIGKILL)
        assert os.waitpid(pid, 0)[1] != 0
        returned = out.read_text().split() if out.exists() else []
        try:
            m = Memory(path, create=False)
        except MemoryNotFound:
            assert not returned
            outcomes["none"] += 1
            with Memory(path) as m:  # a half-created memory is finished by the next writer
                assert len(m) == 0
            continue
        with m:
            outcomes["opens"] += 1
            assert [m.get(i).id for i in returned] == returned
            assert len(m) >= len(returned)
            assert m.validate().conforms, m.validate().messages
            m.add(ItemSpec("Principle", "after the crash", "Use when checking a crash.", "still writable"))
    assert outcomes["none"] >= 5 and outcomes["opens"] >= 5, outcomes
