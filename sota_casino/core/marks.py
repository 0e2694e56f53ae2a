"""The no-op marker for text shown to players: ``N_("...")`` lets the catalogue extractor find a
message where it is written (core and services know no Flask and no locale); the web layer
translates it by that message id when it shows it."""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802 (gettext's conventional name, which pybabel extracts)
    """Return ``message`` unchanged: it is marked for the catalogues, translated when shown."""
    return message
