"""The size rules of docs/architecture.md, read from that page (ast, nothing imported): every module of
the package at most the stated number of lines and every function's body (its docstring left out) at
most the stated number, except the modules listed below with their reason; and no script of tools/
imports the tests.

Each list fails on a module over the limit that it does not name AND on a listed one no longer over,
so the lists only shrink.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "paddle_pfc"
RULES = (REPO / "docs" / "architecture.md").read_text()


def _stated(what: str) -> int:
    """The limit docs/architecture.md states as ``<what> at most N lines``."""
    found = re.search(rf"{what} at most (\d+) lines", RULES, re.IGNORECASE)
    assert found, f"docs/architecture.md states no '{what} at most N lines'"
    return int(found.group(1))


MODULE_LINES = _stated("modules")
FUNCTION_LINES = _stated("function bodies")

#: Modules over MODULE_LINES, each with why it stays one module.
LONG_MODULES: dict[str, str] = {
    "evaluation/ijb.py": "the IJB-B/C protocol end to end: the release's files, templates, features and scores",
    "interop/onnx_reader.py": "one source format: the graph walk by topology and its checks read together",
    "data/recordio.py": "one file format: framing, headers, the reader and the writer",
    "engine/trainer.py": "the training loop with its resume and non-finite-step handling, which share its state",
    "engine/pretrained.py": "every pretrained source a run starts from, and the centers made from it",
    "kernels/blockwise.py": "the block operations in their two backends, kept side by side to stay alike",
    "backbones/native_layers.py": "the five layers on native kernels, sharing one forward/backward pattern",
    "cli/selfcheck.py": "one command: each backend's check and its report",
    "utils/pickle_machine.py": "one stack machine: its opcodes are one table",
}

#: Functions whose body is over FUNCTION_LINES, as "module.py:function", each with its reason.
LONG_FUNCTIONS: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    return {path.relative_to(PACKAGE).as_posix(): path for path in sorted(PACKAGE.rglob("*.py"))}


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function's body, its docstring left out."""
    body = node.body
    first = body[0]
    if len(body) > 1 and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        first = body[1]
    return node.end_lineno - first.lineno + 1


def _held_to(found: set[str], listed: dict[str, str], limit: int, what: str) -> None:
    unlisted, fixed = sorted(found - set(listed)), sorted(set(listed) - found)
    assert not unlisted, f"{what} over {limit} lines (split it, or list it with its reason): {unlisted}"
    assert not fixed, f"listed as over {limit} lines but no longer: strike them from the list: {fixed}"


def test_modules_stay_under_the_stated_length():
    long = {name for name, path in _modules().items() if _lines(path) > MODULE_LINES}
    _held_to(long, LONG_MODULES, MODULE_LINES, "modules")


def test_functions_stay_under_the_stated_length():
    long = set()
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _body_lines(node) > FUNCTION_LINES:
                long.add(f"{name}:{node.name}")
    _held_to(long, LONG_FUNCTIONS, FUNCTION_LINES, "function bodies")


def test_every_exception_has_a_reason():
    assert all(reason.strip() for reason in {**LONG_MODULES, **LONG_FUNCTIONS}.values())


def _imported(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_tools_never_import_the_tests():
    """tools/ are the commands' scripts and the benchmarks: what the tests hold (helpers, workers,
    the launcher) stays theirs, imported by name or reached by a path into tests/."""
    tests = REPO / "tests"
    theirs = {"tests", "conftest", "launcher", "reference", "helpers", "workers"} | {
        path.stem for path in tests.glob("*.py")}
    found = {}
    for script in sorted((REPO / "tools").rglob("*.py")):
        tree = ast.parse(script.read_text())
        bad = sorted(name for name in _imported(tree) if name.split(".")[0] in theirs)
        bad += sorted({node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                       and isinstance(node.value, str) and re.fullmatch(r"tests(/.*)?", node.value)})
        if bad:
            found[script.relative_to(REPO).as_posix()] = bad
    assert not found, f"tools/ reach into tests/: {found}"
