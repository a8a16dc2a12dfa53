"""Shared fixtures: a temp memory, the shared data directory, real SPARQL servers on loopback, clean DSPy settings."""

import os

import dspy
import pytest

from owl_memory.datadir import data_dir
from owl_memory_bench.servers import Oxigraph, Virtuoso, clear, drop_memory_graphs


@pytest.fixture
def memory(tmp_path):
    """A fresh memory in a temp directory, closed after the test."""
    from owl_memory import Memory

    with Memory(tmp_path / "mem") as m:
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
