"""The no-op markers for text shown to players: ``N_("...")`` lets the catalogue extractor find a
message where it is written (core and services know no Flask and no locale); the web layer
translates it by that message id when it shows it. ``Nn_(singular, plural)`` marks a message
whose words follow a count (its ``%(num)s``), which each language forms its own way. A
:class:`Problem` is such a message with its params, as a check keeps what it found; a param may
be a problem itself, a part of the message said by its own message id."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

#: A message id, or a message that counts: its singular and plural (:func:`Nn_`), by ``num``.
MessageId = str | tuple[str, str]


def N_(message: str) -> str:  # noqa: N802 (gettext's conventional name, which pybabel extracts)
    """Return ``message`` unchanged: it is marked for the catalogues, translated when shown."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802 (as N_)
    """Return the pair unchanged: a message with plural forms, chosen by ``%(num)s`` when shown."""
    return singular, plural


@dataclass(frozen=True, slots=True)
class Problem:
    """What a check found, as a message id and its params: a standing check keeps it so in its
    findings (``findings["found"]``), the ledger check's amounts (``ledger.PROBLEM_AMOUNTS``)
    in minor units of ``params["currency"]``. Its :meth:`text` is the English of the commands
    and the API; the console words it in the operator's language (web/operator.py)."""

    message: str
    params: dict[str, Any] = field(default_factory=dict)
    #: The plural of a message that counts (``Nn_``): English takes it unless ``num`` is 1.
    plural: str = ""

    @classmethod
    def of(cls, message: MessageId, params: dict[str, Any]) -> Problem:
        """A problem from a message id, or from the singular and plural of one that counts."""
        singular, plural = message if isinstance(message, tuple) else (message, "")
        return cls(singular, params, plural)

    def text(self) -> str:
        said = self.plural if self.plural and self.params.get("num") != 1 else self.message
        if not self.params:
            return said
        return said % {name: _said(value, Problem.text) for name, value in self.params.items()}

    def to_json(self) -> dict[str, Any]:
        plural = {"plural": self.plural} if self.plural else {}
        params = {name: _said(value, Problem.to_json) for name, value in self.params.items()}
        return {"message": self.message, "params": params, **plural}


def _said(value: Any, say: Callable[[Problem], Any]) -> Any:
    """A param as ``say`` gives a problem that is one (a part of the message), else as it is."""
    return say(value) if isinstance(value, Problem) else value
