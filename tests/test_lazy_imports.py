"""Names imported inside functions exist where they are imported from. roofline imports its GPU paths
lazily (inside the functions that need CuPy, PyTorch or CUPTI), so a module-level import never
checks them: a name renamed or removed in one module would break another only on a GPU. Every
`from .module import name` (relative, inside a function) of the package is checked here, on the
CPU, against the module it names."""

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "roofline"


def _lazy_imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    target = f"{base}.{node.module}" if node.module else base
                    for alias in node.names:
                        yield pytest.param(target, alias.name, id=f"{module}:{fn.name}:{target}.{alias.name}")


@pytest.mark.parametrize("target, name", list(_lazy_imports()))
def test_a_name_imported_inside_a_function_exists(target, name):
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:  # a submodule named as a name, or a third-party dependency missing here
        if exc.name and not exc.name.startswith("roofline"):
            pytest.skip(f"{target} needs {exc.name}")
        raise
    if not hasattr(module, name):
        importlib.import_module(f"{target}.{name}")  # a submodule: `from . import store`
