"""The package's layers, read from its source (ast, nothing imported): a module imports only its own
layer and those below it, no modules import each other in a cycle, and no module imports the package
itself (its lazy public names are for users: inside it, every name is imported from its home).

Layers, lowest first: utils -> kernels -> runtime -> data -> head / backbones / evaluation -> deploy ->
interop -> engine -> cli / bench. Every import counts (module level or inside a function), except under
``TYPE_CHECKING``.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "paddle_pfc"
LAYERS = {"utils": 0, "kernels": 1, "runtime": 2, "data": 3, "head": 4, "backbones": 4, "evaluation": 4,
          "deploy": 5, "interop": 6, "engine": 7, "bench": 8, "cli": 8}

#: Imports that run up the layers and remain, as (importer, imported) modules. Each is in a file this
#: list's owners will move or change; the test fails on any violation not listed and on any listed
#: one that is gone, so the list only shrinks.
KNOWN_UPWARD: set[tuple[str, str]] = set()
#: Import cycles that remain, each as the sorted tuple of its modules (same rule as above).
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str):
    """(imported module, line) of every import outside ``if TYPE_CHECKING:`` blocks, resolved to
    the deepest module of ours that exists (``from a import b``: ``a.b`` when it is a module)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                yield (full if full in MODULES else base), node.lineno
        stack.extend(ast.iter_child_nodes(node))


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        targets = set()
        for target, _ in _imports(ast.parse(path.read_text(), str(path)), _package_of(name, path)):
            while target and target not in MODULES:  # "paddle_pfc.kernels.native_ops.kernels" -> the module
                target = target.rpartition(".")[0]
            if target.startswith("paddle_pfc") and target != name:
                targets.add(target)
        graph[name] = targets
    return graph


def facade_imports() -> list[str]:
    """``module:line`` of every import of the package itself (``import paddle_pfc``, ``from paddle_pfc
    import X`` where X is no module) inside the package."""
    found = []
    for name, path in MODULES.items():
        if name == "paddle_pfc":
            continue
        for target, line in _imports(ast.parse(path.read_text(), str(path)), _package_of(name, path)):
            if target == "paddle_pfc":
                found.append(f"{name}:{line}")
    return sorted(found)


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    found = set()
    for importer, targets in graph.items():
        for target in targets:
            low, high = layer(importer), layer(target)
            if low is not None and high is not None and high > low:
                found.add((importer, target))
    return found


def cycles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan), each sorted. A package's
    ``__init__`` and its own submodules are not a cycle (the import system runs the package
    first)."""
    def edges(module):
        return [t for t in graph[module] if not (module.startswith(t + ".") and t in MODULES)]

    index, low, on_stack, stack, out, counter = {}, {}, set(), [], set(), [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.add(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer():
    assert all(layer(m) is not None for m in MODULES if m != "paddle_pfc"), \
        sorted(m for m in MODULES if m != "paddle_pfc" and layer(m) is None)


def test_imports_run_down_the_layers():
    found = upward_imports(import_graph())
    assert found - KNOWN_UPWARD == set(), f"imports up the layers: {sorted(found - KNOWN_UPWARD)}"
    assert KNOWN_UPWARD - found == set(), f"fixed, remove from KNOWN_UPWARD: {sorted(KNOWN_UPWARD - found)}"


def test_no_import_cycles():
    found = cycles(import_graph())
    assert found - KNOWN_CYCLES == set(), f"import cycles: {sorted(found - KNOWN_CYCLES)}"
    assert KNOWN_CYCLES - found == set(), f"fixed, remove from KNOWN_CYCLES: {sorted(KNOWN_CYCLES - found)}"


def test_no_module_imports_the_package_facade():
    assert facade_imports() == [], "import each name from its home module, not through paddle_pfc"


def test_the_checks_see_a_violation():
    """The graph checks find an upward import and a cycle when there is one."""
    graph = {"paddle_pfc.utils.a": {"paddle_pfc.head.b"}, "paddle_pfc.head.b": {"paddle_pfc.utils.a"}}
    assert upward_imports(graph) == {("paddle_pfc.utils.a", "paddle_pfc.head.b")}
    assert cycles(graph) == {("paddle_pfc.head.b", "paddle_pfc.utils.a")}
