"""The package's shape holds: every package is installed, rooms stay small, no import cycle, and a dependency's
private API is used only inside its adapter (owl_memory/adapters/)."""

import ast
import collections
import importlib
import re
import subprocess
import sys
from pathlib import Path

import tomllib

from owl_memory.lazy import stub_names

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "owl_memory"
DEPENDENCIES = ("rdflib", "pyshacl", "owlready2", "dspy", "litellm", "pyparsing")
MAX_LINES = 400


def modules(folder: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module under `folder`."""
    out = {}
    for path in folder.rglob("*.py"):
        name = ".".join(path.relative_to(folder.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def test_every_package_folder_is_installed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {name for name, path in {**modules(PACKAGE), **modules(ROOT / "owl_memory_bench")}.items()
             if path.name == "__init__.py"}
    assert found <= listed, f"add to pyproject's packages: {sorted(found - listed)}"


def test_no_package_file_is_over_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these by job: {long}"


def imports(name: str, path: Path, names: set[str]) -> set[str]:
    """The package modules `name` imports anywhere in its file (top level or inside functions)."""
    out, package = set(), name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return {m for m in out if m in names and m != name}


def test_no_import_cycle_in_the_package():
    mods = modules(PACKAGE)
    graph = {name: imports(name, path, set(mods)) for name, path in mods.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while not group or v not in group:
                group.add(stack.pop())
            on.difference_update(group)
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, cycles


SOURCES = ("owl_memory", "owl_memory_bench", "tests", "benchmarks")
DOCUMENTED = {"_exit", "_make", "_asdict", "_replace", "_fields"}  # os._exit and namedtuple's documented API


def trees() -> dict[Path, ast.Module]:
    """The parsed files of the project (package, tooling, tests, benchmarks)."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for folder in SOURCES for p in (ROOT / folder).rglob("*.py")}


def own_names(parsed: dict) -> set[str]:
    """Every name the project itself defines or assigns: its own private names are not a dependency's."""
    out = set()
    for tree in parsed.values():
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add(n.name)
            elif isinstance(n, ast.Attribute | ast.Name) and isinstance(n.ctx, ast.Store):
                out.add(n.attr if isinstance(n, ast.Attribute) else n.id)
            elif isinstance(n, ast.arg | ast.alias):
                out.add(n.arg if isinstance(n, ast.arg) else (n.asname or n.name.split(".")[-1]))
    return out


def _private(name: str) -> bool:
    """A single-underscore name (not a dunder)."""
    return name.startswith("_") and not name.startswith("__")


def test_no_private_api_of_a_dependency_outside_its_adapter():
    parsed = trees()
    own = own_names(parsed) | DOCUMENTED
    uses = collections.defaultdict(set)
    for path, tree in parsed.items():
        if "adapters" in path.parts:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and _private(n.attr) and n.attr not in own:
                uses[str(path.relative_to(ROOT))].add(n.attr)  # someone else's private attribute
            elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in DEPENDENCIES:
                uses[str(path.relative_to(ROOT))] |= {a.name for a in n.names if _private(a.name)}
    assert not {k: v for k, v in uses.items() if v}, dict(uses)


def test_only_the_adapters_import_rdflib_sparql_internals_and_pyshacl():
    inside = collections.defaultdict(list)
    for name, path in modules(PACKAGE).items():
        if ".adapters." in name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mod = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [mod] if mod else []
            for n in names:
                if n and (n.startswith("rdflib.plugins.sparql") or n.split(".")[0] in ("pyshacl", "pyparsing")):
                    inside[name].append(n)
    assert not inside, dict(inside)


def test_the_project_cites_no_design_card_or_seed():
    """What a user needs is in docs/; the design documents the project was built from are not shipped with it."""
    kinds = (".py", ".md", ".yaml", ".ttl", ".json")
    texts = [p for folder in (*SOURCES, "docs", "experiments", "schemas", "shapes", "ontology")
             for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in kinds]
    cited = [str(p.relative_to(ROOT)) for p in [*texts, ROOT / "README.md"]
             if re.search(r"DESIGN\.md|\bseeds?\s+0\d\d", p.read_text(encoding="utf-8", errors="replace"), re.I)]
    assert not cited, cited


def test_import_contracts_hold():
    """pyproject's [tool.importlinter]: the floors (no folder cycle) and every folder's front door."""
    done = subprocess.run([str(Path(sys.executable).with_name("lint-imports"))], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_folder_has_a_front_door_and_no_public_name_hides_a_submodule():
    """A folder's __init__.pyi lists its public names; a name spelled like a submodule would be shadowed by it
    once the submodule is imported (the lazy front door then hands out the module), so none may be."""
    folders = [p for p in PACKAGE.iterdir() if (p / "__init__.py").exists() and p.name not in ("model", "adapters")]
    for folder in folders:
        stub = folder / "__init__.pyi"
        assert stub.exists() or folder.name == "cli", f"{folder.name}/ needs an __init__.pyi listing its public names"
    for stub in PACKAGE.rglob("__init__.pyi"):
        names = set(stub_names(stub.with_suffix(".py")))
        submodules = {p.stem for p in stub.parent.glob("*.py")} | {p.name for p in stub.parent.iterdir() if p.is_dir()}
        assert not names & submodules, f"{stub.relative_to(ROOT)}: rename the submodule {sorted(names & submodules)}"
        package = ".".join(stub.parent.relative_to(ROOT).parts)
        module = importlib.import_module(package)
        assert sorted(names) == module.__all__
        for name in names:
            assert getattr(module, name) is not None, f"{package}.{name}"
