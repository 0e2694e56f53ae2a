"""Each test builds its own app, and Werkzeug compiles two URL builders per route for it (the
``ast`` and ``compile()`` of a small function): about nine tenths of ``create_app``, over a
hundred routes every test. A builder is a pure function of its route's rule, parts and default
names, bound to the rule when used, so the test process compiles each once and every app's
rules share them: the same code builds the same URLs, one compile per run instead of per test.

A rule with a default for one of its own variables is compiled as before (its builder holds
that value as its converter wrote it), and so is every rule if Werkzeug's builder changes shape.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from werkzeug.routing import Rule

_Builder = Callable[..., tuple[str, str]]


def share_url_builders() -> None:
    """Compile each distinct URL builder once in this process (idempotent)."""
    compile_builder = getattr(Rule, "_compile_builder", None)
    if compile_builder is None or getattr(compile_builder, "shared", False):
        return
    if list(inspect.signature(compile_builder).parameters) != ["self", "append_unknown"]:
        return
    compiled: dict[tuple[Any, ...], _Builder] = {}

    def shared_builder(self: Rule, append_unknown: bool = True) -> _Builder:
        defaults = self.defaults or {}
        if any(is_dynamic and part in defaults for is_dynamic, part in self._trace):
            return compile_builder(self, append_unknown)  # type: ignore[no-any-return]
        key = (self.rule, tuple(self._trace), tuple(defaults), append_unknown)
        if key not in compiled:
            compiled[key] = compile_builder(self, append_unknown)
        return compiled[key]

    shared_builder.shared = True  # type: ignore[attr-defined]
    Rule._compile_builder = shared_builder  # type: ignore[method-assign]
