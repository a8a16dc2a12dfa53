"""Shared fixtures: a temp memory (a copy of one built per session), the shared data directory, real SPARQL servers on
loopback, clean DSPy settings; and how the suite spreads over pytest-xdist workers (two by default)."""

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import dspy
import pytest

from owl_memory import Memory
from owl_memory.datadir import data_dir
from owl_memory_bench.servers import Oxigraph, Virtuoso, clear, drop_memory_graphs

SHARED_SCOPES = {"package", "module", "class"}  # a fixture of these scopes is built once for the tests that share it


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`pytest` runs on as many xdist workers as there are cores (`-n auto`, 2 on the development machine and CI),
    scheduled by `--dist loadgroup` in the order of collection; `-n 0`, `-n N` or `--dist` given on the command line
    win, and `-p no:xdist` (or a clone without pytest-xdist) runs in one process."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and not config.option.usepdb:
        config.option.numprocesses = "auto"
    if config.option.dist == "no":
        config.option.dist, config.option.loadscopereorder = "loadgroup", False


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups, in its own hook on each worker
def pytest_collection_modifyitems(config, items):
    """The slowest tests start first, and tests that share an expensive fixture run on one worker.

    A module whose tests use a module-, class- or package-scoped fixture is one xdist group (one worker builds that
    fixture once, where two would each build it); every other test is scheduled on its own. Units holding a test
    marked `slow` (over 5 s) come first, so the long ones start while the short ones fill in around them and the
    workers finish together; otherwise the order of collection is kept.
    """
    shared = {item.fspath for item in items if _uses_shared_fixture(item)}
    for item in items:
        if item.fspath in shared and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(Path(item.fspath).stem))
    slow_units = {_unit(item) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: _unit(item) not in slow_units)


def _uses_shared_fixture(item) -> bool:
    """Whether the test uses a fixture built once per module, class or package."""
    defs = getattr(item, "_fixtureinfo", None)
    return defs is not None and any(d.scope in SHARED_SCOPES for ds in defs.name2fixturedefs.values() for d in ds)


def _unit(item) -> str:
    """The unit xdist schedules the test in: its group, or the test alone."""
    mark = item.get_closest_marker("xdist_group")
    return f"@{mark.args[0] if mark.args else mark.kwargs.get('name', 'default')}" if mark else item.nodeid


@pytest.fixture(scope="session")
def fresh_memory(tmp_path_factory) -> Callable[[Path], Path]:
    """`fresh_memory(folder)`: an empty embedded memory at `folder` (returned), a copy of one built once per session
    (per xdist worker) and closed: a copy costs a few milliseconds where a build costs ~0.1-0.2 s."""
    template = tmp_path_factory.mktemp("template") / "mem"
    Memory(template).close()
    return lambda folder: Path(shutil.copytree(template, folder))


@pytest.fixture
def memory(fresh_memory, tmp_path):
    """A fresh memory in a temp directory, closed after the test."""
    with Memory(fresh_memory(tmp_path / "mem")) as m:
        yield m


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data (or OWL_MEMORY_DATA): skipped in a user's clone, required in CI."""
    d = data_dir(required=False)
    if d is None:
        if os.environ.get("OWL_MEMORY_REQUIRE_DATA") == "1":
            pytest.fail("OWL_MEMORY_REQUIRE_DATA=1 but the shared data directory is missing; set OWL_MEMORY_DATA")
        pytest.skip("shared data (../shared/data) is absent in this clone; set OWL_MEMORY_DATA to run this test")
    return d


@pytest.fixture(autouse=True)
def _clean_dspy_settings():
    """Each test starts and ends with no LM configured."""
    dspy.settings.configure(lm=None)
    yield
    dspy.settings.configure(lm=None)


@pytest.fixture(scope="session")
def oxigraph(tmp_path_factory):
    """One Oxigraph server for the session (tests use fresh datasets by clearing it; see `server_url`)."""
    server = Oxigraph(tmp_path_factory.mktemp("oxigraph"))
    yield server
    server.stop()


@pytest.fixture
def server_url(oxigraph):
    """The URL of an emptied Oxigraph dataset for one test."""
    clear(oxigraph.url)
    return oxigraph.url


@pytest.fixture(scope="session")
def virtuoso(tmp_path_factory):
    """A Virtuoso server for the session; only with OWL_MEMORY_VIRTUOSO=1 (needs the virtuoso-opensource package)."""
    if os.environ.get("OWL_MEMORY_VIRTUOSO") != "1":
        pytest.skip("Virtuoso tests are opt-in: apt-get install -y virtuoso-opensource, then OWL_MEMORY_VIRTUOSO=1")
    server = Virtuoso(tmp_path_factory.mktemp("virtuoso"))
    yield server
    server.stop()


@pytest.fixture
def virtuoso_url(virtuoso):
    """The URL of the Virtuoso server with no memory in it, for one test."""
    drop_memory_graphs(virtuoso.url)
    return virtuoso.url
