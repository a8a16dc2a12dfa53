"""A fast, offline CLI: no LM command imports dspy or litellm, litellm never fetches its price list, tables keep
ids whole, demo leaves nothing behind. (Import times are measured in benchmarks/startup.py, not here.)"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from owl_memory.cli import main

NO_LM_COMMANDS = textwrap.dedent("""
    import sys
    from owl_memory.cli import main
    for argv in (["--help"], ["search", "values", "--memory", sys.argv[1]], ["show", "nope", "--memory", sys.argv[1]],
                 ["window", "nope", "--memory", sys.argv[1]]):
        try:
            main(argv)
        except SystemExit:
            pass
    print(sorted(m for m in ("dspy", "litellm", "pyshacl", "rdflib.plugins.sparql.parser") if m in sys.modules))
""")

NETWORK_WATCH = textwrap.dedent("""
    import socket
    lookups = []
    real = socket.getaddrinfo
    socket.getaddrinfo = lambda *a, **k: (lookups.append(a[0]), real(*a, **k))[1]
    from owl_memory.agent.runner import resolve_lm
    resolve_lm("openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    import litellm  # what the LM calls go through
    print(lookups)
""")


def _add(mem, title, summary="Use when a query takes user text."):
    """Add one Principle with the CLI; its id."""
    out = CliRunner().invoke(main, ["add", "Principle", title, summary, "--content", "body text", "--memory", mem,
                                    "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["id"]


def test_commands_without_an_lm_never_import_dspy_or_litellm(tmp_path):
    mem = str(tmp_path / "mem")
    _add(mem, "Bind values, never paste")
    done = subprocess.run([sys.executable, "-c", NO_LM_COMMANDS, mem], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"  # nor pyshacl, nor rdflib's SPARQL parser: no query ran


@pytest.mark.slow
def test_litellm_never_looks_up_its_price_list_host():
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run([sys.executable, "-c", NETWORK_WATCH], capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_search_table_keeps_every_id_whole(tmp_path):
    mem = str(tmp_path / "mem")
    ids = {_add(mem, f"Bind values, never paste (variant {i}): an-extraordinarily-long-hyphenated-qualifier-for-width")
           for i in range(3)}
    out = CliRunner().invoke(main, ["search", "bind values", "--memory", mem], env={"COLUMNS": "40"})
    assert out.exit_code == 0
    column = out.output.splitlines()[0].split().index("id")
    shown = {line.split()[column] for line in out.output.splitlines()[1:] if line.strip()}
    assert shown == ids
    assert all("…" not in line for line in out.output.splitlines())  # piped output cuts nothing


def test_demo_removes_its_temporary_memory(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = subprocess.run([sys.executable, "-m", "owl_memory", "demo", "--json"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["kept"] is False and result["memory"].startswith(str(scratch))
    assert list(scratch.iterdir()) == []


def test_demo_keeps_a_memory_it_was_given(tmp_path):
    out = CliRunner().invoke(main, ["demo", "--memory", str(tmp_path / "kept"), "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["kept"] is True
    assert CliRunner().invoke(main, ["search", "creator", "--memory", str(tmp_path / "kept")]).exit_code == 0
