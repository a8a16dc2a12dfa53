"""A package's front door: its public names, read from the `__init__.pyi` beside it, imported on first use.

The stub is the one list of what a package offers (`from .module import Name` lines); type checkers read it as the
package's interface, and `front_door` serves the same names at run time through PEP 562's module `__getattr__`, so
importing a package costs nothing until a name is used (`owl-memory search` never loads dspy).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path


def stub_names(init_file: str | Path) -> dict[str, str]:
    """Public name -> relative module, from the `from .module import Name` lines of the package's __init__.pyi."""
    stub = Path(init_file).with_suffix(".pyi")
    names: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            names.update({alias.asname or alias.name: f".{node.module}" for alias in node.names})
    return names


def front_door(package: str, init_file: str) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """`__all__`, `__getattr__` and `__dir__` for a package whose public names its __init__.pyi lists."""
    names = stub_names(init_file)
    module_globals = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        """Import a public name from its module the first time it is used."""
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(names[name], package), name)
        module_globals[name] = value
        return value

    def __dir__() -> list[str]:
        """The public names, for tab completion."""
        return sorted({*module_globals, *names})

    return sorted(names), __getattr__, __dir__
