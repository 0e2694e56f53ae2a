"""Table settings. A change is audited and applies to new rounds only: a round stores the
complete rules it started with."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from ..core import casino_war
from ..core import sota
from ..core.errors import ApprovalRequired
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.errors import NotFound
from ..core.marks import N_
from ..models import TableSetting
from . import idempotency
from . import proposals
from .context import context_of
from .results import Open
from .staff import require_operator
from .tx import in_transaction
from .tx import insert_ignoring_conflicts
from .tx import read_only
from .tx import transactional

TABLES = ("casino_war", "sota")


def _sota_defaults(session: Session) -> dict[str, Any]:
    ctx = context_of(session)
    return {
        "min_stake": ctx.setting("SOTA_MIN_STAKE"),
        "max_stake": ctx.setting("SOTA_MAX_STAKE"),
        "presets": list(sota.PRESETS),
        "custom_rules": True,
    }


def _defaults(session: Session, name: str) -> dict[str, Any]:
    if name == "casino_war":
        return casino_war.TableRules().to_dict()
    return _sota_defaults(session)


def validate(name: str, settings: object) -> dict[str, Any]:
    """Return the complete, valid settings of table ``name``.

    :raises InvalidRules: naming the bad option and the valid ones.
    """
    if not isinstance(settings, Mapping):
        raise InvalidRules(N_("table settings must be an object"))
    if name == "casino_war":
        return casino_war.TableRules.from_dict(settings).to_dict()
    return sota.SotaTable.from_dict(settings).to_dict()


@in_transaction
def current(session: Session, name: str) -> dict[str, Any]:
    """Return table ``name``'s settings inside the caller's transaction."""
    if name not in TABLES:
        raise NotFound(
            N_("no table %(name)s; tables: %(tables)s"),
            params={"name": repr(name), "tables": ", ".join(TABLES)},
        )
    row = session.get(TableSetting, name)
    return dict(row.settings) if row else _defaults(session, name)


#: The process's copy of each table's settings, with the version (``updated_at``) it was read at.
_CACHE = "table_settings"


@in_transaction
def current_as_of(session: Session, name: str, version: datetime | None) -> dict[str, Any]:
    """Return table ``name``'s settings, whose row was last changed at ``version`` (``None``:
    never changed), from the process's memory while it holds that version.

    The caller read ``version`` in its transaction: a round plays the settings committed when
    it began, as if it had read the row itself, at the cost of a timestamp.
    """
    held: dict[str, tuple[datetime | None, dict[str, Any]]]
    held = context_of(session).cache.setdefault(_CACHE, {})
    if name in held and held[name][0] == version:
        return dict(held[name][1])
    row = session.get(TableSetting, name, populate_existing=True)
    settings = dict(row.settings) if row else _defaults(session, name)
    held[name] = (row.updated_at if row else None, settings)
    return dict(settings)


@read_only
def table_rules(session: Session, name: str) -> dict[str, Any]:
    """Return the settings of table ``name``."""
    return current(session, name)


def _locked_row(session: Session, name: str) -> TableSetting:
    """Return table ``name``'s row, locked, creating it with the defaults if it is missing.

    The insert that finds a row already there does nothing (on PostgreSQL it first waits for
    a concurrent first insert to commit), so two first changes at once both find one row.
    """
    if session.get(TableSetting, name, populate_existing=True) is None:
        insert_ignoring_conflicts(
            session,
            TableSetting,
            {"name": name, "settings": _defaults(session, name), "updated_at": datetime.now(UTC)},
        )
    row = session.get(TableSetting, name, with_for_update=True, populate_existing=True)
    assert row is not None
    return row


def _merged(name: str, before: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """Return the valid settings of table ``name`` once ``changes`` are merged over ``before``.

    :raises InvalidRules: naming the ``field`` of the change it is about: the option the check
        names, or, when the change did not send that one but sent the option it is compared
        with (a maximum below the present minimum), that one.
    """
    try:
        return validate(name, {**before, **changes})
    except InvalidRules as error:
        option, other = error.details.get("option"), error.params.get("other")
        if option not in changes and other in changes:
            option = other
        if isinstance(option, str):
            error.details["field"] = option
        raise


def _checked_change(
    session: Session, actor_id: int, name: str, changes: object
) -> Mapping[str, Any]:
    require_operator(session, actor_id)
    current(session, name)  # an unknown table is a 404 before anything is written
    if not isinstance(changes, Mapping) or not changes:
        raise InvalidInput(N_("send the settings to change as a non-empty object"))
    _merged(name, current(session, name), changes)  # refused now, not on approval
    return changes


@in_transaction
def needs_approval(session: Session) -> bool:
    """Whether table changes wait for a second operator (four eyes)."""
    return bool(context_of(session).setting("FOUR_EYES_TABLES"))


@transactional
def update_table(session: Session, actor_id: int, name: str, changes: object) -> dict[str, Any]:
    """Change table settings (merged over the present ones), audited; new rounds only.

    :raises ApprovalRequired: when table changes wait for a second operator
        (:func:`propose_table_change`).
    """
    changes = _checked_change(session, actor_id, name, changes)
    if needs_approval(session):
        raise ApprovalRequired(N_("a table change needs a second operator's approval: propose it"))
    return apply_table_change(session, actor_id, name, changes)


@in_transaction
def apply_table_change(
    session: Session,
    actor_id: int,
    name: str,
    changes: Mapping[str, Any],
    *,
    approval: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Apply a change checked already, inside the caller's transaction (audited).

    The row is locked before it is read, so two changes at once apply one after the other and
    each audit entry's ``before`` is what the change replaced. ``approval`` names who
    approved it, if someone did.
    """
    row = _locked_row(session, name)
    before = dict(row.settings)
    after = _merged(name, before, changes)
    row.settings, row.updated_at, row.updated_by = after, datetime.now(UTC), actor_id
    data = {"before": before, "after": after}
    proposals.record_applied(session, actor_id, "table.updated", f"table:{name}", data, approval)
    return after


@idempotency.idempotent("settings.propose_table_change", proposals.ApprovalView)
def propose_table_change(
    session: Session, actor_id: int, name: str, changes: object, *, key: str | None = None
) -> proposals.ApprovalView:
    """Propose a table change for a second operator to approve (audited); nothing changes yet.

    A retried ``idempotency_key`` returns the first proposal instead of making a second.
    """
    return _propose(session, actor_id, name, _checked_change(session, actor_id, name, changes))


def _propose(
    session: Session, actor_id: int, name: str, changes: Mapping[str, Any]
) -> proposals.ApprovalView:
    change = {"table": name, "changes": dict(changes)}
    return proposals.propose(session, actor_id, "table", f"table:{name}", change)


@idempotency.idempotent("settings.request_table_change", proposals.Requested[Open])
def request_table_change(
    session: Session, actor_id: int, name: str, changes: object, *, key: str | None = None
) -> proposals.Requested[Open]:
    """Apply a table change, or propose it when changes wait for a second operator (the
    console's one button).

    A retried ``idempotency_key`` (a double submit of the form) returns the first answer.
    """
    checked = _checked_change(session, actor_id, name, changes)
    if needs_approval(session):
        return proposals.Requested(None, _propose(session, actor_id, name, checked))
    return proposals.Requested(apply_table_change(session, actor_id, name, checked), None)
