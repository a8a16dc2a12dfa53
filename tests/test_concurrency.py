"""Many processes on one embedded memory: parallel writers lose nothing, readers never fail, locks are named."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
import traceback
from pathlib import Path
from urllib.parse import unquote

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
    """Announce it is searching (`<out>.ready`), then search until `stop` exists and once more after (that last
    search sees every write); writes how many searches ran and the most items any of them saw."""
    searches, seen, done = 0, set(), False
    with Memory(path, create=False) as m:
        while not done:
            done = stop.exists()
            for hit in m.search("lesson", task_type="drill", k=50):
                seen.add(hit.id)
            m.window(hit.id) if seen else None
            searches += 1
            Path(f"{out}.ready").touch(exist_ok=True)
            time.sleep(0.02)
        final = len(m)
    out.write_text(f"{searches} {len(seen)} {final}")


def _wait(pid: int) -> int:
    """Exit code of a child."""
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.mark.slow
def test_four_writers_and_four_readers_lose_nothing(tmp_path):
    path = tmp_path / "mem"
    Memory(path).close()
    stop = tmp_path / "stop"
    readers = [_fork(_reader, path, stop, tmp_path / f"r{r}") for r in range(READERS)]
    try:
        _wait_for(*[tmp_path / f"r{r}.ready" for r in range(READERS)])  # every reader searches while writers write
        writers = [_fork(_writer, path, w, tmp_path / f"w{w}") for w in range(WRITERS)]
        codes = [_wait(p) for p in writers]
    finally:
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


def _hold_lock(path: Path, release: Path, out: Path) -> None:
    """Hold the memory's write lock, announced by `<memory>/held`, until `release` exists."""
    with Memory(path) as m, m.backend.transaction():
        m.backend.lock.path.with_name("held").touch()
        _wait_for(release)
    out.write_text("done")


def _wait_for(*files: Path, seconds: float = 300) -> None:
    """Poll until every file exists (what another process announces); TimeoutError after `seconds` instead of hanging
    when that process died first (a guard, not a window: nothing is raced)."""
    deadline = time.monotonic() + seconds
    while not all(f.exists() for f in files):
        if time.monotonic() > deadline:
            raise TimeoutError(f"not announced within {seconds} s: {[str(f) for f in files if not f.exists()]}")
        time.sleep(0.01)


def test_a_writer_waits_then_names_the_holder_while_readers_go_on(tmp_path, monkeypatch):
    path, release = tmp_path / "mem", tmp_path / "release"
    with Memory(path) as m:
        first = m.add(ItemSpec("Principle", "Bind values", "Use when a query takes user text.", "never paste"))
    pid = _fork(_hold_lock, path, release, tmp_path / "holder")
    try:
        _wait_for(path / "held")
        monkeypatch.setenv("OWL_MEMORY_LOCK_WAIT", "0.3")
        with Memory(path, create=False) as m:
            assert [h.id for h in m.search("bind")] == [first]  # reading while another process writes
            assert m.get(first).title == "Bind values"
            started = time.monotonic()
            with pytest.raises(MemoryLocked) as e:
                m.add(ItemSpec("Principle", "Other", "Use when other.", "other"))
            assert 0.3 <= time.monotonic() - started < 2.0
        assert f"pid {pid}" in str(e.value) and "OWL_MEMORY_LOCK_WAIT" in str(e.value)
    finally:
        release.touch()  # the holder lets go only now: nothing above races it
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


CRASH_ADDS, KILLS = 3, 50  # items a crash-drill child adds; kills of the drill (one child each)
DURABLE = ("sql:COMMIT", "fsync", "rename")  # the points where what was written becomes durable


def _stop_at(memory: Path, kill_at: int | None, seen: list) -> None:
    """Instrument this (forked) process: every SQL statement on a file of `memory` (a trace callback on each sqlite3
    connection to one), every os.fsync and os.rename is a point, appended to `seen` as a label; at point number
    `kill_at` (0-based) the process sends itself SIGKILL before that step runs."""
    connect, rename, fsync = sqlite3.connect, os.rename, os.fsync

    def point(label: str) -> None:
        """Count one point; die at the chosen one."""
        if len(seen) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        seen.append(label)

    def traced_connect(database, *args, **kwargs):
        """sqlite3.connect, with each statement on the memory's files a point."""
        db = connect(database, *args, **kwargs)
        if str(memory) in unquote(str(database)):
            db.set_trace_callback(lambda sql: point("sql:" + sql.split(maxsplit=1)[0].upper()))
        return db

    def traced_rename(*args, **kwargs):
        """os.rename as a point."""
        point("rename")
        return rename(*args, **kwargs)

    def traced_fsync(fd):
        """os.fsync as a point."""
        point("fsync")
        return fsync(fd)

    sqlite3.connect, os.rename, os.fsync = traced_connect, traced_rename, traced_fsync


def _create_and_add(path: Path, kill_at: int | None, out: Path) -> None:
    """Create a memory and add CRASH_ADDS items, writing each id to `out` once add has returned; killed at point
    `kill_at` (see _stop_at), or, with None, writing every point's label (and the returns) to `<out>.points`."""
    seen: list = []
    _stop_at(path, kill_at, seen)
    with Memory(path) as m, out.open("w") as f:
        for n in range(CRASH_ADDS):
            f.write(m.add(ItemSpec("Procedure", f"step {n}", f"Use when step {n} is due.", f"do step {n}")) + "\n")
            f.flush()
            seen.append(f"returned {n}")
    Path(f"{out}.points").write_text("\n".join(seen))


def _kill_points(path: Path) -> tuple[list[int], int]:
    """Where the drill kills, read off one run of the child that is not killed: every durable point and the one after
    it until the second add returned, the rest of KILLS spread evenly over the other points of that span; and the
    number of the rename that puts the graph file in place (a kill up to it leaves no memory, after it one)."""
    out = path.with_suffix(".ids")
    assert _wait(_fork(_create_and_add, path, None, out)) == 0, [e.read_text() for e in path.parent.glob("*.err")]
    labels = Path(f"{out}.points").read_text().split("\n")
    points = [x for x in labels if not x.startswith("returned")]
    span = labels.index("returned 1") - 1  # points before the second add returned ("returned 0" is not one)
    durable = sorted({i + step for i, x in enumerate(points[:span]) if x in DURABLE for step in (0, 1)})
    others = [k for k in range(span) if k not in durable]
    spread = others[::len(others) // (KILLS - len(durable))][:KILLS - len(durable)]
    return sorted(durable + spread), points.index("rename")


@pytest.mark.slow
def test_kill_9_at_any_moment_leaves_no_memory_or_one_that_opens_with_every_returned_write(tmp_path):
    """The child stops itself (SIGKILL) at chosen points of its own run: SQL statements, fsyncs and the rename of
    creation, opening, and its first writes; up to the rename there is no memory (the next writer finishes one),
    after it a memory that opens, validates and holds every write that returned. No timing: the same kills every run."""
    kills, rename = _kill_points(tmp_path / "calibration")
    outcomes = {"none": 0, "opens": 0}
    for trial, kill_at in enumerate(kills):
        path, out = tmp_path / f"m{trial}", tmp_path / f"ids{trial}"
        status = os.waitpid(_fork(_create_and_add, path, kill_at, out), 0)[1]
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (kill_at, status)
        returned = out.read_text().split() if out.exists() else []
        try:
            m = Memory(path, create=False)
        except MemoryNotFound:
            assert not returned and kill_at <= rename, kill_at
            outcomes["none"] += 1
            with Memory(path) as m:  # a half-created memory is finished by the next writer
                assert len(m) == 0
            continue
        with m:
            assert kill_at > rename, kill_at
            outcomes["opens"] += 1
            assert [m.get(i).id for i in returned] == returned
            assert len(m) >= len(returned)
            assert m.validate().conforms, m.validate().messages
            m.add(ItemSpec("Principle", "after the crash", "Use when checking a crash.", "still writable"))
    assert len(kills) == KILLS and outcomes["none"] >= 5 and outcomes["opens"] >= 5, outcomes
