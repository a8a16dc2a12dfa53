"""ablate(parallel=True) from a script: an unguarded call is refused before anything starts; a guarded one is not."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from owl_memory.ablation.spawn_guard import _guarded

CURRICULUM = Path(__file__).resolve().parents[1] / "experiments" / "construction" / "curriculum.yaml"
SCRIPT = """import json
from owl_memory import ablate
from owl_memory.ablation.spawn_guard import unguarded_call
from owl_memory.errors import ConfigError

print("top level runs", flush=True)
try:
    ablate({curriculum!r}, "A0,A2", out={out!r})
except ConfigError as e:
    print(json.dumps({{"refused": str(e)}}), flush=True)
if __name__ == "__main__":
    print(json.dumps({{"guarded": unguarded_call()}}), flush=True)
"""


def test_an_unguarded_script_is_refused_before_any_worker_starts(tmp_path):
    out = tmp_path / "out"
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(curriculum=str(CURRICULUM), out=str(out)), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines.count("top level runs") == 1  # no worker re-ran the script
    refused, guarded = json.loads(lines[1])["refused"], json.loads(lines[2])["guarded"]
    assert f"{script}:8" in refused and 'if __name__ == "__main__":' in refused and "parallel=False" in refused
    assert guarded is None  # inside the guard the same check lets the call through
    assert not out.exists()  # nothing was written


def test_python_c_needs_no_guard():
    code = "from owl_memory.ablation.spawn_guard import unguarded_call; print(unguarded_call())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "None", done.stderr[-2000:]


@pytest.mark.parametrize(("source", "line", "expected"), [
    ("ablate()\n", 1, False),
    ('if __name__ == "__main__":\n    ablate()\n', 2, True),
    ("if '__main__' == __name__:\n    x = 1\n    ablate()\n", 3, True),
    ('if __name__ == "__main__":\n    pass\nablate()\n', 3, False),
    ('if __name__ != "__main__":\n    ablate()\n', 2, False),
    ('try:\n    if __name__ == "__main__":\n        ablate()\nexcept KeyError:\n    pass\n', 3, True),
])
def test_guard_detection_reads_the_parsed_script(source, line, expected):
    assert _guarded(ast.parse(source), line) is expected
