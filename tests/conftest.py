"""Shared fixtures: a temp memory, the shared data directory, clean DSPy settings."""

import os

import dspy
import pytest
from servers import oxigraph, server_url, virtuoso, virtuoso_url  # noqa: F401  (real SPARQL servers on loopback)

from owl_memory.datadir import data_dir


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
