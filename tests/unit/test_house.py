"""The house's own rules for naus/: files a reader takes in at once, and every build/ or results/ path made by
naus.pipeline.layout (a literal elsewhere is a second definition of where a file lies)."""

import ast
import json
import re

from tests.helpers import ROOT

MODULES = sorted((ROOT / "naus").rglob("*.py"))


def test_every_module_is_at_most_450_lines():
    long = {str(path.relative_to(ROOT)): n for path in MODULES if (n := len(path.read_text().splitlines())) > 450}
    assert not long, long


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return {id(node.body[0].value) for node in nodes
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def test_no_build_or_results_path_is_written_outside_layout():
    found = []
    for path in MODULES:
        if path.name == "layout.py":
            continue
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and any(folder in node.value for folder in ("build/", "results/")):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:60]!r}")
    assert not found, found


def test_a_decided_study_left_the_tree_and_its_json_names_the_commit_of_its_script():
    """benchmarks/ holds what measures today's code: a study whose decision is made leaves the tree, its row in the
    decisions table and its JSON naming the commit that holds its script."""
    index = (ROOT / "results/benchmarks/README.md").read_text()
    decided = re.findall(r"\| `([\w.]+\.json)` \| `([\w/]+\.py)` at ([0-9a-f]{7,40}) \|", index)
    assert len(decided) >= 20 and not (ROOT / "benchmarks/archive").exists()
    for result, script, commit in decided:
        assert not (ROOT / "benchmarks" / script).exists(), script
        assert commit in json.loads((ROOT / "results/benchmarks" / result).read_text())["script"], result


def _imports() -> dict[str, set[str]]:
    """Each module of naus/ and the modules of naus/ it imports, at its top or inside a function (the package
    itself, which every module takes NausError from, aside)."""
    names = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
             for path in MODULES}
    graph = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        graph[name] = {target for target in found if target in names and target not in (name, "naus")}
    return graph


def test_no_module_imports_one_that_imports_it_back():
    """Data flow one way: no circle of imports, however late one is made (a function-level import hides one)."""
    graph, circles = _imports(), []

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in path:
                circles.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target, path + [target])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    assert not circles, circles[:3]


def test_the_lock_pins_each_requirement_at_its_version():
    """requirements.lock (what `make setup` installs) is resolved from requirements.txt: `make lock` after an edit."""
    lock = {line.split(" ")[0] for line in (ROOT / "requirements.lock").read_text().splitlines() if "==" in line}
    wanted = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    stale = [pin for pin in wanted if pin and pin.lower().replace("_", "-") not in lock]
    assert not stale, f"not in requirements.lock at these versions (run make lock): {stale}"


def test_no_test_file_is_named_for_when_it_was_written():
    """Tests are filed under the module whose guarantee they check (a hostile input's test beside the code that refuses
    it), so that a module's tests are found by its name, not by the review round that asked for them."""
    rounds = re.compile(r"test_(hostile|bad_input|bounds|careless)|_(one|two|three|four|five|six|seven|eight|nine|ten"
                        r"|round\d*)$")
    named = [path.name for path in (ROOT / "tests").rglob("test_*.py") if rounds.search(path.stem)]
    assert not named, named


PIPELINE = ("naus.pipeline", "naus.data", "naus.report", "naus.commands", "naus.cli", "naus.__main__")


def _in(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def test_the_library_imports_nothing_of_the_pipeline():
    """The method (teacher, students, decoding, evaluation, settings, text, the Summarizer) is a library the pipeline
    (the plan and paths, data acquisition, the report, the command line) imports, never the reverse; the plumbing
    imports neither (only naus.text, which cleans each line it reads); nothing of naus imports the scripts beside it
    (the lease shuttle) or the benchmarks."""
    graph = _imports()
    wrong = {name: sorted(t for t in targets if _in(t, PIPELINE)) for name, targets in graph.items()
             if not _in(name, PIPELINE)}
    assert not {name: targets for name, targets in wrong.items() if targets}
    plumbing = {name: sorted(t for t in targets if not _in(t, ("naus.plumbing", "naus.text")))
                for name, targets in graph.items() if _in(name, ("naus.plumbing",))}
    assert plumbing and not {name: targets for name, targets in plumbing.items() if targets}
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            assert not any(_in(m, ("scripts", "benchmarks")) for m in modules), path


def test_the_top_of_naus_holds_at_most_twelve_modules_beside_its_packages():
    top = sorted(path.name for path in (ROOT / "naus").glob("*.py"))
    assert len(top) <= 12, top
