"""The no-op markers for text shown to players: ``N_("...")`` lets the catalogue extractor find a
message where it is written (core and services know no Flask and no locale); the web layer
translates it by that message id when it shows it. ``Nn_(singular, plural)`` marks a message
whose words follow a count (its ``%(num)s``), which each language forms its own way."""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802 (gettext's conventional name, which pybabel extracts)
    """Return ``message`` unchanged: it is marked for the catalogues, translated when shown."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802 (as N_)
    """Return the pair unchanged: a message with plural forms, chosen by ``%(num)s`` when shown."""
    return singular, plural
