"""CLI startup benchmark: import time of commands that run no LM, measured with `python -X importtime`.

Each command runs in a fresh interpreter `--repeat` times; the table shows the median import time (the sum of the
top-level cumulative times -X importtime reports), the interpreter's own start-up imports (`python -c pass`, the
baseline, measured in the same run), the command's share above that baseline, wall time, and whether dspy or
litellm was imported. `import dspy` is measured too, as the cost every command paid before the CLI became lazy.
Run: python benchmarks/startup.py [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP_LEVEL = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")  # an import at nesting level 0
RUN_CLI = "import sys; from owl_memory.cli import main; sys.argv = {argv!r}; main()"


def import_profile(code: str) -> tuple[float, set[str], float]:
    """Import seconds (top-level cumulative sum), imported module names and wall seconds of `python -c code`."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    total, names = 0, set()
    for line in out.stderr.splitlines():
        if m := TOP_LEVEL.match(line):
            total += int(m.group(1))
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return total / 1e6, names, wall


def measure(name: str, code: str, repeat: int, baseline: float) -> dict:
    """Median figures of `repeat` runs of one command."""
    runs = [import_profile(code) for _ in range(repeat)]
    imports = statistics.median(r[0] for r in runs)
    names = runs[-1][1]
    return {"command": name, "import_s": round(imports, 3), "above_baseline_s": round(imports - baseline, 3),
            "wall_s": round(statistics.median(r[2] for r in runs), 3),
            "dspy": "dspy" in names, "litellm": "litellm" in names}


def small_memory(folder: Path) -> Path:
    """A memory with one item, for the search and show commands."""
    path = folder / "mem"
    subprocess.run([sys.executable, "-m", "owl_memory", "add", "Principle", "Bind values, never paste",
                    "Use when a query takes user text.", "--content", "Use VALUES with escaped literals.",
                    "--memory", str(path)], check=True, capture_output=True)
    return path


def main() -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (median shown)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        memory = str(small_memory(Path(tmp)))
        baseline = statistics.median(import_profile("pass")[0] for _ in range(args.repeat))
        commands = {
            "python -c pass (baseline)": "pass",
            "owl-memory --help": RUN_CLI.format(argv=["owl-memory", "--help"]),
            "owl-memory search": RUN_CLI.format(argv=["owl-memory", "search", "values", "--memory", memory]),
            "owl-memory show": RUN_CLI.format(argv=["owl-memory", "show", "nope", "--memory", memory]),
            "import dspy (before: every command)": "import dspy",
        }
        rows = [measure(name, code, args.repeat, baseline) for name, code in commands.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'command':40} {'import s':>9} {'above base':>11} {'wall s':>7}  dspy  litellm")
    for r in rows:
        print(f"{r['command']:40} {r['import_s']:9.3f} {r['above_baseline_s']:11.3f} {r['wall_s']:7.3f}  "
              f"{'yes' if r['dspy'] else 'no':4}  {'yes' if r['litellm'] else 'no'}")
    help_row = next(r for r in rows if r["command"] == "owl-memory --help")
    dspy_row = rows[-1]
    print(f"\n--help imports in {help_row['import_s'] / dspy_row['import_s']:.2f}x the time of `import dspy` alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
