"""Parallel ablations start worker processes with multiprocessing's spawn method, and a spawned worker re-runs the
main script's top level (as `__mp_main__`). A script that calls `ablate(parallel=True)` outside
`if __name__ == "__main__":` would start the ablation again in every worker (multiprocessing then fails with a
RuntimeError per worker and a BrokenProcessPool). This module finds such a call before any process starts.

The main module is re-run exactly when `multiprocessing.spawn.get_preparation_data` says so (a script file, or
`python -m pkg.mod` other than a package's `__main__`); `python -c`, the REPL, notebooks, `python -m owl_memory` and
the `owl-memory` command are never re-run.
"""

from __future__ import annotations

import ast
import sys
import traceback
from multiprocessing import spawn
from pathlib import Path

from ..errors import ConfigError


def check_spawn_safe(what: str) -> None:
    """ConfigError when `what` (a call about to spawn workers) runs at the unguarded top level of a re-run script."""
    where = unguarded_call()
    if where is not None:
        raise ConfigError(f"{what} was called at {where[0]}:{where[1]}, outside `if __name__ == \"__main__\":`; "
                          "each worker process re-runs that script's top level and would start it again. Put the "
                          "call under that guard, or run serially (parallel=False; --serial on the command line).")


def unguarded_call() -> tuple[str, int] | None:
    """(file, line) of the main script's top-level statement running now, if spawn re-runs it and no guard holds it."""
    main = sys.modules.get("__main__")
    if main is None or not _rerun_by_spawn():
        return None
    line = next((n for f, n in traceback.walk_stack(None)
                 if f.f_globals is vars(main) and f.f_code.co_name == "<module>"), None)
    path = getattr(main, "__file__", None)
    if line is None or path is None:
        return None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None  # a compiled or unreadable main: nothing to check against
    return None if _guarded(tree, line) else (path, line)


def _rerun_by_spawn() -> bool:
    """True when a spawned process would import the main module again (multiprocessing's own rule)."""
    data = spawn.get_preparation_data("owl-memory-check")
    name = data.get("init_main_from_name")
    if name is not None:
        return not (name == "__main__" or name.endswith(".__main__"))
    return "init_main_from_path" in data


def _guarded(tree: ast.Module, line: int) -> bool:
    """True when `line` lies in the body of an `if __name__ == "__main__":` block."""
    return any(isinstance(node, ast.If) and _is_main_test(node.test)
               and node.body[0].lineno <= line <= (node.body[-1].end_lineno or node.body[-1].lineno)
               for node in ast.walk(tree))


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {_term(test.left), _term(test.comparators[0])}
    return sides == {"name", "main"}


def _term(node: ast.expr) -> str | None:
    """'name' for `__name__`, 'main' for the string "__main__", else None."""
    if isinstance(node, ast.Name) and node.id == "__name__":
        return "name"
    if isinstance(node, ast.Constant) and node.value == "__main__":
        return "main"
    return None
