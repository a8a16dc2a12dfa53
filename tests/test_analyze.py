"""owl-memory analyze: what a memory's records say about its active items, counted, with ids."""

import json

from click.testing import CliRunner

from owl_memory import ItemSpec, Memory
from owl_memory.cli import main


def test_analyze_counts_never_used_failing_conflicting_superseded_and_stale(tmp_path):
    mem = tmp_path / "m"
    with Memory(mem) as m:
        ids = [m.add(ItemSpec("Principle", f"Rule number {n}", f"Use for case {n}.", f"Do thing {n}."))
               for n in range(6)]
        m.record_use(ids[0], success=True)
        m.record_use(ids[1], success=False)
        m.record_use(ids[1], success=False)
        m.link(ids[2], "conflictsWith", ids[3])
        m.supersede(ids[4], ids[5])  # ids[5] supersedes ids[4]
    cli = CliRunner()
    result = cli.invoke(main, ["analyze", "--memory", str(mem), "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["active"] == 5  # ids[4] is superseded
    assert sorted(found["never_used"]["ids"]) == sorted([ids[2], ids[3], ids[5]])
    assert found["always_failing"] == {"count": 1, "ids": [ids[1]]}
    assert found["conflicting"] == {"count": 1, "ids": ["<>".join(sorted([ids[2], ids[3]]))]}
    assert found["superseded"] == {"count": 1, "ids": [f"{ids[5]}>{ids[4]}"]}
    assert found["stale"]["count"] == 0  # nothing is 90 days old
    now = json.loads(cli.invoke(main, ["analyze", "--stale-days", "0", "--memory", str(mem), "--json"]).output)
    assert sorted(now["stale"]["ids"]) == sorted([ids[1], ids[2], ids[3], ids[5]])  # ids[0] succeeded
    text = cli.invoke(main, ["analyze", "--memory", str(mem)]).output.splitlines()
    assert text[0] == "5 active items" and text[2] == f"always failing: 1 ({ids[1]})"
    missing = cli.invoke(main, ["analyze", "--memory", str(tmp_path / "none")])
    assert missing.exit_code == 2 and not (tmp_path / "none").exists()
