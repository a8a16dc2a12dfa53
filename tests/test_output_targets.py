"""Every file owl-memory writes is checked first: special files are refused with OutputError (exit 2), symlinks are
written through atomically, and no path ends in a traceback."""

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from rdflib import Graph, Literal, URIRef

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main
from owl_memory.errors import OutputError
from owl_memory.rdfio import check_output, write_graph, write_text

GRAPH = Graph()
GRAPH.add((URIRef("http://example.org/a"), URIRef("http://example.org/p"), Literal("x")))


@pytest.fixture
def memory_path(tmp_path) -> Path:
    """A memory with one item."""
    path = tmp_path / "mem"
    with Memory(path) as m:
        m.add(ItemSpec("Principle", "Bind values never paste", "Use when a query takes user text.", "payload"))
    return path


def special_files(tmp_path: Path) -> dict[str, Path]:
    """A FIFO, a socket, a folder, a device node, a kernel file and links to some of them."""
    fifo, sock, folder = tmp_path / "fifo", tmp_path / "sock", tmp_path / "folder"
    os.mkfifo(fifo)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    folder.mkdir()
    (tmp_path / "to-fifo").symlink_to(fifo)
    (tmp_path / "to-null").symlink_to("/dev/null")
    return {"FIFO": fifo, "socket": sock, "folder": folder, "device": Path("/dev/full"), "/dev": Path("/dev/stdout"),
            "/proc": Path("/proc/version"), "/sys": Path("/sys/kernel/notes"), "link to a FIFO": tmp_path / "to-fifo",
            "link to a device": tmp_path / "to-null"}


def test_special_files_are_refused_before_any_work_and_left_as_they_were(tmp_path):
    for what, path in special_files(tmp_path).items():
        before = os.lstat(path) if os.path.lexists(path) else None
        with pytest.raises(OutputError) as e:
            write_graph(GRAPH, path, "turtle")
        assert str(path) in str(e.value) or what in str(e.value), (what, str(e.value))
        after = os.lstat(path) if os.path.lexists(path) else None
        assert (before.st_mode, before.st_ino) == (after.st_mode, after.st_ino), what


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.ttl"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.ttl"
    link.symlink_to(real)
    assert write_graph(GRAPH, link, "turtle") == real
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(Graph().parse(real)) == 1 and not list(tmp_path.glob(".*.tmp"))


def test_odd_names_are_typed_errors_not_tracebacks(tmp_path):
    for bad in (str(tmp_path / "a\x00b.ttl"), str(tmp_path / ("x" * 5000)), str(tmp_path / "missing" / "f.ttl")):
        with pytest.raises(OutputError):
            check_output(bad, "turtle")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OutputError):
        write_text("x", loop)


@pytest.mark.parametrize("target", ["/dev/full", "/proc/version", "FIFO", "folder"])
def test_export_and_repair_out_exit_2_and_replace_nothing(tmp_path, memory_path, target):
    path = special_files(tmp_path).get(target, Path(target))
    runner = CliRunner()
    for args in (["export", str(path), "--memory", str(memory_path)],
                 ["repair", str(Path(__file__).parent / "data" / "hostile" / "data.ttl"), "--shapes",
                  str(Path(__file__).parent / "data" / "hostile" / "shapes.ttl"), "--out", str(path), "--memory",
                  str(memory_path)]):
        before = os.stat(path)
        r = runner.invoke(main, args)
        assert r.exit_code == 2 and "OutputError" in r.output, (args, r.output)
        assert (os.stat(path).st_mode, os.stat(path).st_ino) == (before.st_mode, before.st_ino)


def test_ablate_out_and_report_files_are_checked_before_any_work(tmp_path):
    curriculum = str(Path(__file__).resolve().parents[1] / "experiments" / "construction" / "curriculum.yaml")
    not_a_folder = tmp_path / "results"
    not_a_folder.write_text("mine", encoding="utf-8")
    r = CliRunner().invoke(main, ["ablate", curriculum, "--conditions", "A0", "--out", str(not_a_folder)])
    assert r.exit_code == 2 and "OutputError" in r.output and not_a_folder.read_text() == "mine"
    folder = tmp_path / "runs"
    done = CliRunner().invoke(main, ["ablate", curriculum, "--conditions", "A0", "--holdout-every", "9", "--serial",
                                     "--out", str(folder)])
    assert done.exit_code == 0, done.output
    (folder / "report.html").unlink()
    os.mkfifo(folder / "report.html")
    r = CliRunner().invoke(main, ["report", str(folder)])
    assert r.exit_code == 2 and "FIFO" in r.output and (folder / "report.html").is_fifo()
