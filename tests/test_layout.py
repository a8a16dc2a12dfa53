"""The package's shape holds: every package is installed, rooms stay small, no import cycle, a dependency's private
API and internal modules are used only inside its adapter (owl_memory/adapters/), handlers that catch everything are
few and say why, importing a module writes nothing to the environment, and mypy finds no type error."""

import ast
import collections
import importlib
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
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
CODE_INTERNALS = {"__globals__", "__code__", "__closure__"}  # reaching into a function's code, not calling it


def trees() -> dict[Path, ast.Module]:
    """The parsed files of the project (package, tooling, tests, benchmarks)."""
    return {p: ast.parse(p.read_text(encoding="utf-8")) for folder in SOURCES for p in (ROOT / folder).rglob("*.py")}


def in_adapter(path: Path) -> bool:
    """Whether a file is one of the adapters (owl_memory/adapters/), by its place in the project."""
    return path.relative_to(ROOT).parts[:2] == ("owl_memory", "adapters")


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
    """A private name is the project's own when the package or its tooling defines it, or (in tests) the test file
    itself or conftest.py: a name a test defines does not excuse another file's use of a dependency's."""
    parsed = trees()
    tests = ROOT / "tests"
    shared = own_names({p: t for p, t in parsed.items() if tests not in p.parents}) | DOCUMENTED
    shared_in_tests = shared | own_names({p: t for p, t in parsed.items() if p == tests / "conftest.py"})
    uses = collections.defaultdict(set)
    for path, tree in parsed.items():
        if in_adapter(path):
            continue
        own = shared_in_tests | own_names({path: tree}) if tests in path.parents else shared
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and (_private(n.attr) and n.attr not in own or n.attr in CODE_INTERNALS):
                uses[str(path.relative_to(ROOT))].add(n.attr)  # someone else's private attribute or code object
            elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in DEPENDENCIES:
                uses[str(path.relative_to(ROOT))] |= {a.name for a in n.names if _private(a.name)}
    found = {k: sorted(v) for k, v in uses.items() if v}
    assert not found, found


# Modules of a dependency that only its adapter imports: its internals, and litellm (which dspy calls the providers
# through) as a whole. The package keeps rdflib's SPARQL parser, pySHACL and pyparsing behind theirs too (below).
INTERNAL_MODULES = ("pyshacl.", "litellm", "dspy.primitives", "dspy.clients", "dspy.utils.callback", "owlready2.")


def imported_modules(tree: ast.Module) -> list[str]:
    """Every module a file imports (`import a.b` and `from a.b import c` both give a.b)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
    return out


def test_only_the_adapters_import_a_dependencys_internal_modules():
    found = collections.defaultdict(list)
    for path, tree in trees().items():
        if not in_adapter(path):
            found[str(path.relative_to(ROOT))] += [m for m in imported_modules(tree)
                                                   if any(m == i.rstrip(".") and not i.endswith(".") or
                                                          m.startswith(i if i.endswith(".") else i + ".")
                                                          for i in INTERNAL_MODULES)]
    found = {k: v for k, v in found.items() if v}
    assert not found, found


BROAD_HANDLERS = 11  # the LM boundary (8), rdflib's SPARQL parser and evaluator (2), a pySHACL run (1)


def _catches_everything(handler: ast.ExceptHandler) -> bool:
    """Whether a handler names Exception (alone or in a tuple), or is a bare `except:` or `except BaseException`
    that does not re-raise."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {k.id for k in kinds if isinstance(k, ast.Name)}
    return "Exception" in names or (handler.type is None or "BaseException" in names) and not _reraises(handler)


def _reraises(handler: ast.ExceptHandler) -> bool:
    """Whether a handler ends by re-raising what it caught (cleanup, then `raise`): it swallows nothing."""
    last = handler.body[-1]
    return isinstance(last, ast.Raise) and last.exc is None


def test_few_handlers_catch_everything_and_each_says_why():
    """Catch only the exceptions you expect, where they happen: a handler naming Exception (or a bare one that does
    not re-raise) is one of a counted few, and a comment on its line says why it must be that broad."""
    broad, silent = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        comments = {t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type == tokenize.COMMENT}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ExceptHandler) and _catches_everything(node):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                broad.append(where)
                if node.lineno not in comments:
                    silent.append(where)
    assert len(broad) <= BROAD_HANDLERS, f"{len(broad)} handlers catch everything; catch what you expect: {broad}"
    assert not silent, f"say on the line why these must catch everything: {silent}"


def _environ_write(node: ast.AST) -> bool:
    """Whether a node writes the process environment: os.environ[...] = / del / setdefault / update / pop / clear,
    os.putenv, os.unsetenv."""
    def is_environ(x):
        return isinstance(x, ast.Attribute) and x.attr == "environ" or isinstance(x, ast.Name) and x.id == "environ"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        f = node.func
        return is_environ(f.value) and f.attr in ("setdefault", "update", "pop", "popitem", "clear", "__setitem__") \
            or f.attr in ("putenv", "unsetenv")
    targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else \
        [node.target] if isinstance(node, ast.AugAssign) else []
    return any(isinstance(t, ast.Subscript) and is_environ(t.value) for t in targets)


def _run_on_import(node: ast.AST):
    """The nodes a module runs when it is imported: everything but the bodies of functions and lambdas."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _run_on_import(child)


def test_importing_a_module_writes_nothing_to_the_environment():
    """Settings a dependency needs (litellm's local price map) are set when they are needed, in one function of its
    adapter, never as a side effect of an import."""
    writes = [f"{p.relative_to(ROOT)}:{n.lineno}" for folder in ("owl_memory", "owl_memory_bench", "benchmarks")
              for p in sorted((ROOT / folder).rglob("*.py"))
              for n in _run_on_import(ast.parse(p.read_text(encoding="utf-8"))) if _environ_write(n)]
    assert not writes, writes


def test_only_the_adapters_import_rdflib_sparql_internals_and_pyshacl():
    inside = collections.defaultdict(list)
    for name, path in modules(PACKAGE).items():
        if ".adapters." in name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mod = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [mod] if mod else []
            for n in names:
                if n and (n.startswith("rdflib.plugins.sparql") or n.split(".")[0] in ("pyshacl", "pyparsing",
                                                                                        "litellm")):
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


@pytest.mark.slow
def test_types_check():
    """mypy over the package as pyproject's [tool.mypy] configures it (default strictness plus the bodies of
    unannotated functions) reports no error; a failure shows mypy's report."""
    done = subprocess.run([sys.executable, "-m", "mypy"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert done.stdout.startswith("Success: no issues found"), done.stdout[-6000:]


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


def test_the_architecture_page_draws_the_floors_and_names_every_module():
    """docs/architecture.md is true to the code: its picture of the floors is pyproject's layers contract, top to
    bottom, and its table names each folder's modules, no more and no fewer."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawn = re.findall(r"^floor +\d+ +(.+?)\s*$", page, re.M)
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert drawn == next(c for c in contracts if c["type"] == "layers")["layers"], (
        "redraw the floors in docs/architecture.md from pyproject's layers contract")
    rows = {m[1]: set(re.findall(r"`(\w+)`", m[2]))
            for m in re.finditer(r"^\| `(owl_memory/[\w/]*)` \|[^|]*\|([^|]*)\|$", page, re.M)}
    folders = {p.parent.relative_to(ROOT).as_posix() + "/" for p in PACKAGE.rglob("*.py")}
    assert set(rows) == folders, f"rows to add or remove: {sorted(set(rows) ^ folders)}"
    for folder, named in rows.items():
        files = {p.stem for p in (ROOT / folder).glob("*.py")} - {"__init__"}
        assert named == files, f"{folder}: add {sorted(files - named)}, remove {sorted(named - files)}"
