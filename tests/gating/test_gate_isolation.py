"""The gate is plain Python: standard library only, and it never pulls in a framework."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("django", "rest_framework", "celery")


def _imported_modules(path: Path) -> set[str]:
    """Top-level names of every absolute import in a file."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_importing_the_gate_loads_no_framework():
    code = (
        "import json, sys\n"
        "import gating, gating.cli, gating.mix\n"
        "roots = {name.split('.')[0] for name in sys.modules}\n"
        f"print(json.dumps(sorted(roots & set({list(FRAMEWORKS)!r}))))\n"
    )

    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )

    assert json.loads(run.stdout) == []


def test_the_gate_sources_import_only_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"gating"}
    sources = sorted((REPO / "gating").rglob("*.py"))
    assert sources, "no gate sources found"

    outside = {
        str(path.relative_to(REPO)): sorted(_imported_modules(path) - allowed) for path in sources
    }

    assert {path: names for path, names in outside.items() if names} == {}


def test_the_gate_tests_do_not_touch_django():
    tests = sorted(Path(__file__).parent.glob("*.py"))

    touching = [
        str(path.name) for path in tests if _imported_modules(path) & {"django", "pytest_django"}
    ]

    assert touching == []
