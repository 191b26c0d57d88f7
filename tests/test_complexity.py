"""No function of the service is more complex than 15 by radon's count.

ruff's C901 (mccabe) counts branches only; radon also counts each boolean operator and each
comprehension clause, which is where this code base hides its decisions (long ``and``/``or``
conditions, filtering comprehensions). 15 is the gate: past it a function decides too many
things to be read at once, and is split into helpers named for what each part decides.
Classes are not gated as such: their methods are, one by one.
"""

from pathlib import Path

import pytest
from django.conf import settings
from radon.visitors import Class, ComplexityVisitor, Function

MAX_COMPLEXITY = 15
CHECKED = ("providers", "allocations", "scheduling", "placementsite", "scripts")

BASE = Path(settings.BASE_DIR)


def checked_modules():
    for folder in CHECKED:
        for path in sorted((BASE / folder).rglob("*.py")):
            if "migrations" not in path.relative_to(BASE).parts:
                yield path
    for path in sorted((BASE / "scripts").iterdir()):
        # scripts/ also holds Python programs without the .py suffix.
        if (
            path.is_file()
            and path.suffix == ""
            and path.read_text().startswith("#!/usr/bin/env python")
        ):
            yield path


def functions_of(blocks, prefix=""):
    """``(qualified name, line, complexity)`` of every function, method and closure."""
    for block in blocks:
        if isinstance(block, Class):
            yield from functions_of(block.methods, f"{prefix}{block.name}.")
            yield from functions_of(block.inner_classes, f"{prefix}{block.name}.")
        elif isinstance(block, Function):
            yield f"{prefix}{block.name}", block.lineno, block.complexity
            yield from functions_of(block.closures, f"{prefix}{block.name}.")


def top_level(source):
    visitor = ComplexityVisitor.from_code(source)
    return [*visitor.functions, *visitor.classes]


def too_complex(source, limit=MAX_COMPLEXITY):
    return [
        (name, line, complexity)
        for name, line, complexity in functions_of(top_level(source))
        if complexity > limit
    ]


def test_no_function_is_more_complex_than_the_gate():
    offenders = [
        f"{path.relative_to(BASE)}:{line} {name} ({complexity})"
        for path in checked_modules()
        for name, line, complexity in too_complex(path.read_text())
    ]
    assert offenders == []


def test_the_walk_covers_the_apps_the_site_and_the_scripts():
    walked = {str(path.relative_to(BASE)) for path in checked_modules()}
    assert "scheduling/candidates.py" in walked
    assert "placementsite/dashboard/try_request.py" in walked
    assert "scripts/bench_boot.py" in walked
    assert not any("/migrations/" in path for path in walked)


BOOLEANS = "def f(a, b, c, d):\n    return " + " and ".join("abcd" * 4) + "\n"
COMPREHENSION = (
    "def f(rows):\n    return [r for r in rows if r if r.a if r.b for s in r if s.c if s.d"
    " for t in s if t if t.x if t.y if t.z if t.w if t.v if t.u if t.q]\n"
)
NESTED = (
    "class A:\n    def m(self, x):\n        def inner(y):\n            return "
    + " or ".join(["y"] * 16)
    + "\n        return inner\n"
)


@pytest.mark.parametrize(
    "source, found",
    [
        (BOOLEANS, [("f", 1, 16)]),
        (COMPREHENSION, [("f", 1, 17)]),
        (NESTED, [("A.m.inner", 3, 16)]),
        ("def f(x):\n    return x and x\n", []),
    ],
)
def test_the_gate_counts_boolean_operators_comprehensions_and_closures(source, found):
    assert too_complex(source) == found
