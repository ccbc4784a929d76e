"""The package's shape (envs/README.md): every benchmark folder has the
same parts, and the import graph of src/confide has no cycle.

The import graph is built statically from the source (ast), so a cycle hidden behind a
function-local or `if TYPE_CHECKING:` import counts as well: both are dependencies a
reader must follow, and a lazy import is the usual way such a circle is papered over."""

from __future__ import annotations

import ast
import importlib
import itertools
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

import confide
from confide.registry import benchmark_ids, get_benchmark

SRC = Path(confide.__file__).parent

# The parts every benchmark folder has (envs/README.md). Files end in `.py`; folders in `/`.
REQUIRED_PARTS = (
    "declaration.py",
    "spec.py",
    "scenario.py",
    "options.py",
    "events.py",
    "actions.py",
    "env.py",
    "participants/",
    "prompts/",
    "metrics.py",
    "outputs/",
    "data/",
)
# `demo` is the runtime's smoke fixture (a relay ring, tasks in code, no paper, no data,
# prompts or tables of its own), registered so `confide run demo` exercises the runtime.
NOT_BENCHMARKS = frozenset({"demo"})


def _package_dir(benchmark_id: str) -> Path:
    """envs/<id with - as _>/, which must be where the registered spec lives."""
    name = benchmark_id.replace("-", "_")
    assert importlib.import_module(f"confide.envs.{name}").SPEC is get_benchmark(benchmark_id)
    return SRC / "envs" / name


@pytest.mark.parametrize("benchmark_id", [b for b in benchmark_ids() if b not in NOT_BENCHMARKS])
def test_every_benchmark_folder_has_the_contract_parts(benchmark_id: str) -> None:
    folder = _package_dir(benchmark_id)
    assert (folder / "__init__.py").is_file(), f"{benchmark_id}: folder is not named by id"
    missing = []
    for part in REQUIRED_PARTS:
        path = folder / part.rstrip("/")
        ok = path.is_dir() if part.endswith("/") else path.is_file()
        if not ok:
            missing.append(part)
    assert not missing, f"{folder}: missing {', '.join(missing)}"
    # participants/ and outputs/ are packages with code; data/ and prompts/ hold files
    assert (folder / "participants" / "__init__.py").is_file()
    assert (folder / "outputs" / "__init__.py").is_file()
    assert any(p.suffix != ".py" for p in (folder / "data").rglob("*") if p.is_file())
    assert any(p.suffix == ".txt" for p in (folder / "prompts").rglob("*"))


def test_every_env_folder_is_a_registered_id() -> None:
    """No folder under envs/ outside the registry: folders and ids are one vocabulary."""
    folders = {p.name for p in (SRC / "envs").iterdir() if (p / "__init__.py").is_file()}
    assert folders == {b.replace("-", "_") for b in benchmark_ids()}


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package `root`."""
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its source.

    `from a.b import c` depends on `a.b.c` when that is a module, else on `a.b`; a name
    outside the package is dropped. Lazy imports inside functions and imports under
    `if TYPE_CHECKING:` count (module docstring: both hide a dependency a reader must
    follow). Parent packages' `__init__` are not added as edges: Python runs them first,
    so they never close a circle on their own."""
    modules = module_names(root)

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: list[str] = []
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets += [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
        graph[name] = {t for t in map(owner, targets) if t is not None and t != name}
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_sees_a_planted_circle(tmp_path: Path) -> None:
    """The checker itself: a lazy import, a relative import and a TYPE_CHECKING import
    each close a circle (the one core.benchmark -> core.trace -> registry ->
    core.benchmark hid behind the last kind)."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub import b\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub.b import g\n")
    (pkg / "sub" / "b.py").write_text("from ..a import f\n")
    (pkg / "c.py").write_text("from pkg import d\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import x\n"
    )
    graph = import_graph(pkg)
    assert graph["pkg.c"] == {"pkg.d"}
    assert graph["pkg.sub"] == {"pkg.sub.b"}
    assert graph["pkg.d"] == {"pkg.c"}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"], ["pkg.c", "pkg.d"]]


def test_the_trace_schema_and_writer_reach_no_registry() -> None:
    """core.benchmark names trace events and the recorder; only the trace reader looks
    specs up in the registry, so the schema, the writer and the path rules must not
    reach it (else core.benchmark -> core.trace -> registry -> core.benchmark closes)."""
    graph = import_graph(SRC)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for target in graph[todo.pop()] - seen:
                seen.add(target)
                todo.append(target)
        return seen

    for module in ("events", "writer", "paths"):
        assert "confide.registry" not in reach(f"confide.core.trace.{module}"), module
    assert "confide.registry" in reach("confide.core.trace.reader")
    assert "confide.core.trace" not in reach("confide.core.benchmark")


def test_the_package_has_no_import_cycles() -> None:
    assert cycles(import_graph(SRC)) == []


SHARED_LAYERS = ("core", "llm", "runner", "report", "stats", "view", "testing")


def test_shared_layers_import_no_benchmark() -> None:
    """envs/README.md rule 7: benchmarks are reached through the registry, never imported
    (the viewer reaches a benchmark's leak events and panels through `BenchmarkSpec.view`)."""
    graph = import_graph(SRC)
    offending = sorted(
        (module, target)
        for module, targets in graph.items()
        if module.split(".")[1:2] and module.split(".")[1] in SHARED_LAYERS
        for target in targets
        if target.startswith("confide.envs.")
    )
    assert offending == []


@pytest.mark.parametrize("benchmark_id", [b for b in benchmark_ids() if b not in NOT_BENCHMARKS])
def test_every_env_names_its_parts_alike(benchmark_id: str) -> None:
    """One shape inside every env: the seat's participant protocol is `actions.Participant`
    and the options class `options.EnvOptions`, the one the spec declares."""
    package = f"confide.envs.{_package_dir(benchmark_id).name}"
    participant = importlib.import_module(f"{package}.actions").Participant
    assert getattr(participant, "_is_protocol", False), f"{package}.actions.Participant"
    options = importlib.import_module(f"{package}.options").EnvOptions
    assert get_benchmark(benchmark_id).options is options


@pytest.mark.parametrize("benchmark_id", [b for b in benchmark_ids() if b not in NOT_BENCHMARKS])
def test_every_judge_sits_in_its_env_as_judge(benchmark_id: str) -> None:
    """A benchmark with a `judge` role keeps the judge at `envs/<id>/judge` (a module or a
    package), not inside `participants/` or `privacy/`."""
    spec = get_benchmark(benchmark_id)
    if not any(role.name == "judge" for role in spec.roles):
        pytest.skip(f"{benchmark_id} has no judge role")
    package = f"confide.envs.{_package_dir(benchmark_id).name}"
    assert importlib.util.find_spec(f"{package}.judge") is not None, f"{package}.judge"


@pytest.mark.parametrize("benchmark_id", [b for b in benchmark_ids() if b not in NOT_BENCHMARKS])
def test_every_env_has_one_episode_function(benchmark_id: str) -> None:
    """`env.run_episode` (play, then `env.score_episode`) is the spec's: tests and benches
    that call it run exactly what `confide run` runs, judge and all."""
    spec = get_benchmark(benchmark_id)
    env = importlib.import_module(f"confide.envs.{_package_dir(benchmark_id).name}.env")
    assert spec.run_episode is env.run_episode
    assert spec.score_episode is env.score_episode


def test_no_env_module_imports_its_outputs() -> None:
    """`outputs/` is the top of each env: it imports the env, and nothing in the env but
    the module that assembles the spec (the package's `__init__` or its `spec.py`, which
    wire the output hooks) and the benchmark's own CLI commands (`cli`, above its
    outputs) imports `outputs/`."""
    graph = import_graph(SRC)
    offending = []
    for module, targets in graph.items():
        parts = module.split(".")
        top = ("outputs", "spec", "cli")
        if parts[:2] != ["confide", "envs"] or len(parts) < 4 or parts[3] in top:
            continue
        outputs = ".".join(parts[:3]) + ".outputs"
        offending += [(module, t) for t in targets if t == outputs or t.startswith(outputs + ".")]
    assert sorted(offending) == []


# ---- benchmark knowledge stays in the benchmark (Declaration hooks) ------------------------

STRING_FREE_LAYERS = ("core", "llm", "runner", "report", "view", "cli", "evaluate", "stats",
                      "testing")
GENERIC_COLUMNS = {
    "coordination": "the eval profile's axis (core/eval_design.Axis, evaluate/render.AXES)",
    "success": "EvalDesign's default worst-first results column, which it lets a design set",
    "cost_usd": "the runner's spend column (runner/spend.py), which a glossary may define",
}
"""Words a shared layer uses for its own purpose that a benchmark also declares as a
column; every other declared column is the benchmark's."""


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes: of modules, classes and functions, and the attribute
    docstrings that follow an assignment."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.update(id(s.value) for s in body[:1] if isinstance(s, ast.Expr))
        found.update(
            id(after.value)
            for before, after in itertools.pairwise(body)
            if isinstance(before, ast.Assign | ast.AnnAssign) and isinstance(after, ast.Expr)
        )
    return found


def benchmark_strings(
    paths: list[Path], ids: list[str], columns: set[str]
) -> list[str]:
    """`file:line: 'text'` for every string literal (docstrings excepted; comments are not
    in the tree) that names a benchmark id (or its folder name) as a word, or is one of
    the benchmarks' metric columns."""
    names = sorted({name for i in ids for name in (i, i.replace("-", "_"))}, key=len)
    word = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        found += [
            f"{path}:{node.lineno}: {node.value[:60]!r}"
            for node in sorted(
                (n for n in ast.walk(tree) if isinstance(n, ast.Constant)),
                key=lambda n: (n.lineno, n.col_offset),
            )
            if isinstance(node.value, str) and id(node) not in docs
            and (word.search(node.value) or node.value in columns)
        ]
    return found


def test_the_string_finder_sees_a_planted_id_and_column(tmp_path: Path) -> None:
    planted = tmp_path / "layer.py"
    planted.write_text(
        '"""Docstrings may cite calbench."""\n'
        "# comments too: sotopia-tom\n"
        'A = {"calbench": 1}\n'
        'B = "Excess"\n'
        'C = f"runs/{x}/sotopia_tom"\n'
        'D = "calbenchmark, sotopia-tomato and the VPS column of Excessive"\n'
        "def f():\n"
        '    """calbench again."""\n',
        encoding="utf-8",
    )
    assert [line.split(": ", 1)[1] for line in benchmark_strings(
        [planted], ["calbench", "sotopia-tom"], {"Excess"}
    )] == ["'calbench'", "'Excess'", "'/sotopia_tom'"]


def test_no_shared_layer_names_a_benchmark_or_its_columns() -> None:
    """The shared layers know a benchmark only through its declaration and spec: no
    literal names a benchmark id or one of its metric columns (the glossary's, which hold
    every column a headline figure draws; the catalog, glossary,
    headline figures and benchmark-only commands are declared in envs/<id>/declaration.py;
    `confide.registry`'s id table is the one place the ids are written)."""
    from confide.registry import catalog

    declared = [d for d in catalog()[0] if d.id not in NOT_BENCHMARKS]
    columns = {t.column for d in declared for t in d.glossary} - set(GENERIC_COLUMNS)
    paths = sorted(p for layer in STRING_FREE_LAYERS for p in (SRC / layer).rglob("*.py"))
    assert benchmark_strings(paths, [d.id for d in declared], columns) == []
