"""Shared fixtures: a temp memory (a copy of one built per session), the shared data directory, real SPARQL servers on
loopback, clean DSPy settings; and how the suite spreads over pytest-xdist workers."""

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import dspy
import pytest

from owl_memory import Memory
from owl_memory.datadir import data_dir
from owl_memory_bench.servers import Oxigraph, Virtuoso, ck25_endpoint, clear, drop_memory_graphs


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """`pytest` runs on as many xdist workers as there are cores (`-n auto`: 2 on the development machine and CI), each
    test file on one worker (`--dist loadfile`: a module's fixtures are built once, session ones once per worker; the
    files with the most tests start first); -n or --dist on the command line win, and `-n 0` or `-p no:xdist` (or a
    clone without pytest-xdist) runs in one process."""
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and not config.option.usepdb:
        config.option.numprocesses = "auto"
    if config.option.dist == "no":
        config.option.dist = "loadfile"


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
def ck25(shared_data):
    """The TEXT2SPARQL CK25 folder of the shared data (questions, knowledge graph, four systems' answers)."""
    return shared_data / "text2sparql-ck25"


@pytest.fixture(scope="session")
def ck25_url(tmp_path_factory, shared_data):
    """The query URL of one Oxigraph per session serving the CK25 vocabulary and instances in its default graph, as
    the challenge's endpoint serves them (read only by the tests)."""
    server = ck25_endpoint(tmp_path_factory.mktemp("ck25"), shared_data)
    yield f"{server.url}/query"
    server.stop()


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
