"""The console's lists, paged by cursor and downloaded whole: players, a player's rounds, money
moves and seed pairs; and a range of the audit log that verifies offline on its own.

The routes hang on the console's blueprint, so its staff-only rule guards them too.
"""

from __future__ import annotations

import re
from typing import Any
from typing import Final
from typing import Protocol

from flask import Response
from flask import render_template
from flask import request
from flask.typing import ResponseReturnValue

from ..core.errors import InvalidInput
from ..core.marks import N_
from ..db import get_session
from ..models import ROLES
from ..services import accounts
from ..services import audit
from ..services import lists
from ..services.results import NEWEST
from ..services.results import to_json
from .downloads import attachment
from .downloads import stamp
from .downloads import table_download
from .format import term
from .i18n import gettext
from .inputs import query_int
from .inputs import query_text
from .operator import bp
from .schemas import AUDIT_FILTER_MAX
from .schemas import KEPT_PATTERN
from .schemas import MAX_KEPT
from .schemas import NAME_FILTER_MAX

PAGE_SIZE: Final = 50
#: The lists of one player the console pages, each titled with the player's name.
PLAYER_LISTS: Final = {
    "rounds": N_("Rounds of %(name)s"),
    "transfers": N_("Money moves of %(name)s"),
    "seed_pairs": N_("Seed pairs of %(name)s"),
}
#: The lists' columns as the console heads them (the exports keep the field names).
COLUMN_TITLES: Final = {
    "id": N_("Id"),
    "game": N_("Game"),
    "status": N_("Status"),
    "currency": N_("Currency"),
    "staked": N_("Staked"),
    "payout": N_("Payout"),
    "net": N_("Net"),
    "outcome": N_("Outcome"),
    "seed_pair_id": N_("Seed pair"),
    "nonce": N_("Nonce"),
    "created_at": N_("Started"),
    "settled_at": N_("Settled"),
    "time": N_("Time"),
    "kind": N_("Kind"),
    "amount": N_("Amount"),
    "round_id": N_("Round"),
    "memo": N_("Reason / memo"),
    "commitment": N_("Commitment"),
    "client_seed": N_("Client seed"),
    "rounds": N_("Rounds"),
    "revealed_at": N_("Revealed"),
    "server_seed": N_("Server seed"),
}
bp.add_app_template_global(term)


@bp.app_template_global()
def column_title(name: str) -> str:
    """Return a list column's heading in the request's language."""
    words = COLUMN_TITLES.get(name)
    return gettext(words) if words else name.replace("_", " ")


class Ranged(Protocol):
    since: str | None
    until: str | None


class Paged(Ranged, Protocol):
    order: str
    cursor: int | None
    from_id: int | None
    limit: int


def paging_of(query: Paged) -> lists.Paging:
    """The paging an API query asked for."""
    return lists.Paging(
        order=query.order,
        cursor=query.cursor,
        from_id=query.from_id,
        since=query.since,
        until=query.until,
        limit=query.limit,
    )


def _time(name: str) -> str | None:
    return query_text(name, AUDIT_FILTER_MAX) or None


def page_paging() -> lists.Paging:
    """The paging a console page's query string asks for."""
    return lists.Paging(
        order=request.args.get("order") or NEWEST,
        cursor=query_int("cursor", default=None),
        from_id=query_int("from_id", default=None),
        since=_time("since"),
        until=_time("until"),
        limit=PAGE_SIZE,
    )


def list_download(name: str, query: Ranged | None = None, **args: Any) -> Response:
    """Stream list ``name`` in a date range as CSV or JSON Lines, checked before it starts."""
    db = get_session()
    since, until = (query.since, query.until) if query else (_time("since"), _time("until"))
    kind = getattr(query, "format", None) or request.args.get("format")
    paging = lists.Paging(since=since, until=until)
    spec = lists.check_export(db, name, paging, **args)
    stem = name.replace("_", "-") + (f"-user-{args['user_id']}" if "user_id" in args else "")
    return table_download(lists.iter_all(db, name, paging, **args), spec.columns, kind, stem)


def range_export_response(
    *,
    from_seq: int | None = None,
    to_seq: int | None = None,
    since: str | None = None,
    until: str | None = None,
    kept: str | None = None,
) -> Response:
    """A range of the log as JSON Lines, with the checkpoint and proof that vouch for it, and
    a consistency proof from each ``kept`` size (comma-separated) to that checkpoint.

    :raises InvalidInput: if ``kept`` is not sizes separated by commas (the API's pattern).
    """
    sizes: list[int] = []
    if kept is not None:
        if not re.fullmatch(KEPT_PATTERN, kept):
            raise InvalidInput(
                N_(
                    "kept must be the sizes of the checkpoints you kept, as whole numbers "
                    "separated by commas (at most %(most)s), such as 1000,2000"
                ),
                params={"most": MAX_KEPT},
                field="kept",
            )
        sizes = [int(size) for size in kept.split(",")]
    db = get_session()
    audit.flush(db)  # every entry committed so far is in the range it resolves
    first, last, proof = audit.export_range(
        db, from_seq=from_seq, to_seq=to_seq, since=since, until=until, kept=sizes
    )
    lines = audit.iter_range_export(db, first, last, proof)
    return attachment(lines, "application/jsonl", f"audit-{first}-{last}-{stamp()}.jsonl")


@bp.get("/audit/range-export")
def audit_range_export() -> ResponseReturnValue:
    return range_export_response(
        from_seq=query_int("from_seq", low=1, default=None),
        to_seq=query_int("to_seq", low=1, default=None),
        since=_time("since"),
        until=_time("until"),
        kept=request.args.get("kept", "").replace(" ", "") or None,  # the form's field, blank
    )


@bp.get("/players")
def players() -> ResponseReturnValue:
    query = query_text("q", NAME_FILTER_MAX)
    paging = page_paging()
    found = lists.page(get_session(), "users", paging, q=query)
    return render_template(
        "operator/players.html",
        query=query,
        users=found.users,
        next_cursor=found.next_cursor,
        paging=paging,
        roles=ROLES,
    )


@bp.get("/players/export")
def players_export() -> ResponseReturnValue:
    return list_download("users", q=query_text("q", NAME_FILTER_MAX))


@bp.get("/players/<id:user_id>/lists/<any(rounds, transfers, seed_pairs):list_name>")
def player_list(user_id: int, list_name: str) -> ResponseReturnValue:
    """One of a player's lists, a page at a time, with its jumps, range and downloads."""
    db, name = get_session(), list_name
    paging = page_paging()
    found = lists.page(db, name, paging, user_id=user_id)
    return render_template(
        "operator/player_list.html",
        user=accounts.get_user(db, user_id),
        name=name,
        title=PLAYER_LISTS[name],
        rows=[to_json(row) for row in getattr(found, name)],  # as the export writes them
        next_cursor=found.next_cursor,
        paging=paging,
        columns=lists.spec_of(name).columns,
        key_field=lists.spec_of(name).key_field,
    )


@bp.get("/players/<id:user_id>/lists/<any(rounds, transfers, seed_pairs):list_name>/export")
def player_list_export(user_id: int, list_name: str) -> ResponseReturnValue:
    return list_download(list_name, user_id=user_id)
