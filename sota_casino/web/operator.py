"""The operator console (pages): audit log, ledger and house results, players, table settings.

Every route of this blueprint is for staff only, enforced once in :func:`staff_only` before any
view runs: a visitor who is not logged in is sent to the login page, a player gets 403, an
auditor may read everything (GET) but change nothing (403 on any other method).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from functools import partial
from typing import Any
from typing import Final
from typing import NamedTuple
from typing import TypedDict

from babel.numbers import NumberFormatError
from babel.numbers import get_group_symbol
from babel.numbers import parse_decimal
from flask import Blueprint
from flask import Response
from flask import abort
from flask import current_app
from flask import g
from flask import jsonify
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.typing import ResponseReturnValue
from markupsafe import Markup

from ..core import sota
from ..core.casino_war import CHIP
from ..core.errors import CasinoError
from ..core.errors import InsufficientFunds
from ..core.errors import InvalidInput
from ..core.errors import InvalidRules
from ..core.marks import N_
from ..core.marks import MessageId
from ..core.marks import Nn_
from ..db import get_session
from ..models import ROLES
from ..services import accounts
from ..services import alerts
from ..services import audit
from ..services import checks
from ..services import day_totals
from ..services import ledger
from ..services import money
from ..services import reports
from ..services import settings
from ..services import staff
from ..services.results import Figure
from ..services.results import to_json
from .charts import Reference
from .charts import Series
from .charts import bar_chart
from .charts import both_sizes
from .charts import line_chart
from .downloads import attachment
from .downloads import stamp
from .downloads import table_download
from .errors import drawn_in_an_outage
from .errors import refusal_page
from .errors import status_of
from .form_words import GARBLED
from .format import chips
from .format import chips_text
from .format import day
from .format import percent
from .format import sweets
from .format import sweets_text
from .format import term
from .format import whole_number
from .format import written_now
from .i18n import error_message
from .i18n import flash_phrase
from .i18n import flash_words
from .i18n import gettext
from .i18n import in_words
from .i18n import ngettext
from .i18n import phrase
from .i18n import phrase_text
from .i18n import select_locale
from .inputs import form_chips
from .inputs import form_key
from .inputs import form_whole
from .inputs import query_int
from .inputs import query_text
from .rules import SOTA_OPTION_TEXT
from .schemas import AUDIT_FILTER_MAX
from .security import SAFE_METHODS
from .security import login_redirect
from .sota import PRESET_TITLES
from .sota import RULE_HELP
from .visitor import session_user

bp = Blueprint("operator", __name__, url_prefix="/operator")

PAGE_SIZE: Final = 50
#: What a typed amount may hold: digits, and the separators of some language (no sign, no
#: exponent); the request's language then reads it (:func:`parse_adjustment_amount`).
AMOUNT_CHARACTERS: Final = re.compile(r"[0-9][0-9.,\u00a0\u202f\u2019']{0,24}")
MINOR_TEXT: Final = re.compile(r"-?[0-9]{1,19}")
ENTRY_COLUMNS: Final = ("seq", "time", "actor", "action", "subject", "data", "prev_hash", "hash")
AUDIT_FILTERS: Final = ("action", "actor", "subject", "since", "until", "text")
#: What auditors may change too: how the console shows things to them, nothing of the casino.
OWN_PREFERENCES: Final = ("operator.set_time_zone", "operator_api.time_zone")
#: What the console says once a role is changed, per role.
ROLE_CHANGED: Final = {
    "player": N_("%(name)s is now a player."),
    "operator": N_("%(name)s is now an operator."),
    "auditor": N_("%(name)s is now an auditor."),
}


@bp.before_request
def staff_only() -> ResponseReturnValue | None:
    """Let only staff in; auditors only read."""
    user = session_user()
    if user is None:
        return login_redirect()
    changes = request.method not in SAFE_METHODS and request.endpoint not in OWN_PREFERENCES
    staff.require_staff(user.role, changes=changes)  # see refused
    g.user = user
    return None


#: Shows a form again with a refusal beside it.
ShowRefusal = Callable[[CasinoError], ResponseReturnValue]
#: The console's forms shown again with their refusal beside them, by endpoint.
REFUSED_BESIDE_FORM: dict[str, ShowRefusal] = {}
View = Callable[..., ResponseReturnValue]


def refusal_shown_by(show: ShowRefusal) -> Callable[[View], View]:
    """Show the decorated form view's refusals with ``show`` (its form again, the reason
    beside it), whether the view or a check before it refused (a field sent twice)."""

    def register(view: View) -> View:
        REFUSED_BESIDE_FORM[f"{bp.name}.{view.__name__}"] = show
        return view

    return register


@bp.errorhandler(CasinoError)
@drawn_in_an_outage
def refused(error: CasinoError) -> ResponseReturnValue:
    """Answer a refused console action with its own 4xx status and message, changing nothing.

    Players' forms flash and go back (see :mod:`.errors`); an operator's refused adjustment or
    setting must not look like a success, so the console shows the refusal with its status:
    beside its form for the forms that say so (:func:`refusal_shown_by`), else on its own page.
    Whoever :func:`staff_only` turned away, something not there (404) and an outage have no
    form to show again.
    """
    show = REFUSED_BESIDE_FORM.get(request.endpoint or "")
    if show is not None and "user" in g and _about_the_form(error):
        return show(error)
    return refusal_page(error)


def _about_the_form(error: CasinoError) -> bool:
    """Whether a refusal is shown beside its form: not something not there (404), nor an
    outage (the 503 every page answers, saying when to try again)."""
    status = status_of(error)
    return status != 404 and status < 500


def _actor() -> str:
    return f"user:{g.user.id}"


# --- audit log --------------------------------------------------------------------------------


def _audit_filters() -> dict[str, str]:
    """Return the filters given in the query string (stripped; empty ones dropped)."""
    found = {name: query_text(name, AUDIT_FILTER_MAX) for name in AUDIT_FILTERS}
    return {name: value for name, value in found.items() if value}


@bp.get("")
def index() -> ResponseReturnValue:
    return redirect(url_for(".audit_log"))


@bp.get("/audit")
def audit_log() -> ResponseReturnValue:
    filters = _audit_filters()
    after_seq = query_int("after_seq", default=None)
    before_seq = query_int("before_seq", default=None)
    from_seq = query_int("from_seq", default=None)
    db = get_session()
    page = audit.entries(
        db,
        after_seq=after_seq,
        before_seq=before_seq,
        from_seq=from_seq,
        order=request.args.get("order") or None,
        limit=PAGE_SIZE,
        **filters,
    )
    return render_template(
        "operator/audit.html",
        page=page,
        filters=filters,
        paged=any(v is not None for v in (after_seq, before_seq, from_seq)),
        status=(status := checks.audit_verdict(db)),
        reason=check_reason(status),
        note=reports.checkpoint_note(db).note,
        text_window=audit.TEXT_WINDOW,
    )


@bp.get("/audit/entries")
def audit_entries_export() -> ResponseReturnValue:
    return entries_download(request.args.get("format"), **_audit_filters())


def entries_download(kind: str | None, **filters: str | None) -> Response:
    """Return the entries the filters match, oldest first, as a CSV (``kind`` "csv") or JSON
    Lines ("jsonl") download, the filters checked before it starts (also used by the API)."""
    rows = audit.iter_entries(get_session(), **filters)
    return table_download(rows, ENTRY_COLUMNS, kind, "audit-entries")


@bp.get("/checks/<name>")
def check_progress(name: str) -> ResponseReturnValue:
    """A standing check's stored verdict and progress, for the page to follow a whole check."""
    return jsonify(to_json(checks.verdict(get_session(), name)))


@bp.post("/checks/<name>")
def request_whole_check(name: str) -> ResponseReturnValue:
    """Ask for a whole check in the background; the page shows its progress."""
    checks.request_whole(get_session(), name, actor=_actor())
    asked = {
        "audit": N_("A whole audit check was asked for; it runs in the background."),
        "ledger": N_("A whole ledger check was asked for; it runs in the background."),
    }
    flash_words(asked[name], "ok")
    target = ".ledger_page" if name == "ledger" else ".audit_log"
    return redirect(url_for(target), code=303)


@bp.post("/audit/checkpoint")
def make_checkpoint() -> ResponseReturnValue:
    signed = audit.checkpoint(get_session(), actor=_actor())
    size = signed["document"]["size"]
    signed_over = phrase(
        Nn_("Signed a checkpoint over %(num)s entry.", "Signed a checkpoint over %(num)s entries."),
        {"num": {"count": size}},
    )
    flash_phrase(signed_over, "ok")
    return redirect(url_for(".audit_log"), code=303)


@bp.get("/audit/proof/<id:seq>")
def inclusion_proof(seq: int) -> ResponseReturnValue:
    response = jsonify(to_json(audit.inclusion_proof(get_session(), seq)))
    response.headers["Content-Disposition"] = f'attachment; filename="audit-proof-{seq}.json"'
    return response


@bp.get("/audit/export")
def export() -> ResponseReturnValue:
    return export_response()


def export_response() -> Response:
    """Return the whole log as a JSON Lines download (also used by the API), signed first by the
    key in use right after a key change (else the export verifies pinned to the new key only
    once some other request has it sign)."""
    audit.sign_after_a_key_change(get_session())
    lines = audit.iter_export(get_session())
    return attachment(lines, "application/jsonl", f"audit-{stamp()}.jsonl")


# --- ledger and house -------------------------------------------------------------------------


def _fraction(figure: Figure | None) -> Fraction | None:
    if figure is None:
        return None
    return Fraction(figure["exact"])


def _edge_chart(summary: reports.LedgerSummary) -> Any:
    """The realized edge of each game by day, with Casino War's theoretical edge as a line."""
    days = sorted({row.day for row in summary.days})
    edges = {(row.day, row.game): row.realized_edge for row in summary.days}
    series = [
        Series(
            game.replace("_", " ").title(),
            tuple((day[5:], _fraction(edges.get((day, game)))) for day in days),
        )
        for game in reports.GAMES
    ]
    theoretical = Fraction(summary.theoretical.casino_war.edge["exact"])
    references = [Reference(gettext("Casino War theoretical"), theoretical, "Casino War")]
    title = gettext("Realized house edge by day")
    return both_sizes(
        partial(line_chart, series, title=title, references=references, value_format=percent)
    )


#: Each game's result chart names its game and unit: the caption above it and its SVG title.
RESULT_CHART_TITLES: Final = {
    "casino_war": N_("Casino War: house result by day (chips)"),
    "sota": N_("Sota: house result by day (sweets)"),
}


def _whole_chips(value: int | Fraction) -> str:
    """Show an axis value counted in chips as the console shows chips (``12`` or ``1.50``)."""
    return chips(round(Fraction(value) * CHIP))


class ResultChart(NamedTuple):
    """A game's result chart on the ledger page: its caption (which names the drawing, so a
    screen reader hears it once), the caption's id, and the drawing."""

    title: str
    caption_id: str
    drawing: Markup


def _result_chart(summary: reports.LedgerSummary, game: str) -> ResultChart:
    """Return the captioned bar chart of a game's house result by day, in the game's unit
    (chips, kept in hundredths, are drawn as chips like the tables above the chart)."""
    unit, shown = (CHIP, _whole_chips) if game == "casino_war" else (1, whole_number)
    bars = [
        (row.day[5:], Fraction(row.house_result, unit)) for row in summary.days if row.game == game
    ]
    title, caption_id = gettext(RESULT_CHART_TITLES[game]), f"result-title-{game}"
    drawing = both_sizes(
        partial(bar_chart, bars, title=title, value_format=shown, caption_id=caption_id)
    )
    return ResultChart(title, caption_id, drawing)


def ledger_problems(check: checks.LedgerCheck) -> list[str]:
    """The ledger check's problems in the operator's language, their amounts as the console
    shows money (chips with hundredths, sweets whole). A verdict stored before its problems
    were kept as message ids reads as it was stored (English, minor units)."""
    found = (check.findings or {}).get("found")
    if not isinstance(found, list):
        return list(check.problems)
    return [problem_words(problem) for problem in found]


def check_reason(check: checks.CheckVerdict) -> str | None:
    """A standing check's reason in the operator's language: its first finding, where the
    check keeps it as a message id (``findings["found"]``), else the reason as the check said
    it (in English: a verdict stored before its reasons were kept as message ids)."""
    found = (check.findings or {}).get("found")
    first = found[0] if isinstance(found, list) and found else None
    if isinstance(first, dict) and isinstance(first.get("message"), str):
        return problem_words(first)
    return check.reason


def problem_words(problem: Any) -> str:
    """A standing check's problem (its message id and params, as the check keeps it) in the
    operator's language: the ledger's amounts as the console shows money, its codes as the
    console's lists say them, and a param that is a problem itself (a part of the message,
    :class:`..core.marks.Problem`) in its own words."""
    params: dict[str, Any] = {
        name: problem_words(value) if _is_problem(value) else value
        for name, value in (problem.get("params") or {}).items()
    }
    plural = problem.get("plural")
    if problem.get("message") in DAY_PROBLEMS:
        message = str(problem["message"])
        return _day_problem_words((message, plural) if isinstance(plural, str) else message, params)
    shown = {"chips": chips_text, "sweets": sweets_text}.get(str(params.get("currency")))
    for name in (*ledger.PROBLEM_AMOUNTS, *ledger.PROBLEM_GIVEN):
        if shown is not None and isinstance(params.get(name), int):
            params[name] = shown(params[name])
    for name in ledger.PROBLEM_CODES:
        if isinstance(params.get(name), str):
            params[name] = term(params[name])
    if isinstance(plural, str) and isinstance(params.get("num"), int):
        return ngettext(str(problem["message"]), plural, params.pop("num"), **params)
    return gettext(str(problem.get("message", "")), **params)


def _is_problem(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("message"), str)


#: What the ledger check says of a closed day whose stored totals differ from its rounds.
DAY_PROBLEMS: Final = (day_totals.DAY_UNSTORED[0], day_totals.DAY_UNSETTLED, day_totals.DAY_OFF)
#: A closed day's figures (:data:`day_totals.FIGURES`) as the console names them.
DAY_FIGURES: Final = {
    "rounds": N_("settled rounds"),
    "handle": N_("amount staked"),
    "house_result": N_("house result"),
    "main_result": N_("main bet result"),
    "antes": N_("antes"),
    "tie_bets": N_("tie bets"),
    "tie_result": N_("tie bet result"),
    "main_result_squares": N_("sum of squared main bet results"),
    "main_result_antes": N_("sum of main bet results times antes"),
    "ante_squares": N_("sum of squared antes"),
    "ties": N_("rounds that began with a tie"),
    "surrenders": N_("surrenders"),
    "tied_antes": N_("antes of rounds that began with a tie"),
    "surrendered_antes": N_("antes of surrendered rounds"),
}


def _day_problem_words(message: MessageId, params: dict[str, Any]) -> str:
    """A closed day's problem in the operator's language: its day as the console writes days,
    the game by its name, each figure that differs by its name and its amounts as money."""
    game = str(params.get("game"))
    money = chips_text if reports.GAME_CURRENCY.get(game) == "chips" else sweets_text

    def shown(name: str, value: object) -> str:
        number = int(str(value))
        return money(number) if name in day_totals.AMOUNT_FIGURES else whole_number(number)

    words = {
        **params,
        "day": day(str(params.get("day"))),
        "game": alerts.GAME_NAMES.get(game, game),
    }
    if message == day_totals.DAY_OFF:
        words["figures"] = ", ".join(
            gettext(
                day_totals.FIGURE_OFF,
                figure=gettext(DAY_FIGURES.get(str(name), str(name))),
                stored=shown(str(name), held),
                summed=shown(str(name), summed),
            )
            for name, held, summed in params.get("differing") or []
        )
    if isinstance(message, tuple):  # a count of rounds, written as a number and counting
        return phrase_text(phrase(message, {**words, "num": {"count": int(params["num"])}}))
    return gettext(message, **words)


@bp.get("/ledger")
def ledger_page() -> ResponseReturnValue:
    db = get_session()
    summary = reports.house_summary(db)
    return render_template(
        "operator/ledger.html",
        summary=summary,
        check=(check := checks.ledger_verdict(db)),
        problems=ledger_problems(check),
        edge_chart=_edge_chart(summary),
        result_charts={game: _result_chart(summary, game) for game in reports.GAMES},
        math=reports.house_math(db, since=_day_arg("since"), until=_day_arg("until")),
    )


@bp.app_template_global()
def checkpoint_covers() -> int:
    """Return how many audit entries the latest signed checkpoint covers (once per request)."""
    if "checkpoint_size" not in g:
        g.checkpoint_size = audit.checkpoint_size(get_session())
    size: int = g.checkpoint_size
    return size


@bp.app_template_global()
def check_minutes() -> int:
    """Return within how many minutes the standing checks' next background step runs (it runs
    every ``CHECK_INTERVAL_SECONDS``), rounded up; 0: this server runs them in no background,
    only ``flask checks run`` does."""
    seconds = int(current_app.config.get("CHECK_INTERVAL_SECONDS") or 0)
    return -(-seconds // 60) if seconds > 0 else 0


@bp.app_template_global()
def war_settings(rules: dict[str, Any]) -> str:
    """Return a Casino War table's decks and tie bet in words of the request's language: its
    decks counted with their plural form ("1 deck"), and a table without a tie bet says so
    (a payout of nought is no tie bet, not one that pays 0 to 1)."""
    decks = ngettext("%(num)s deck", "%(num)s decks", int(rules.get("decks") or 0))
    payout = rules.get("tie_payout")
    if not payout:
        return f"{decks}, {gettext(N_('no tie bet'))}"
    return f"{decks}, {gettext(N_('tie pays %(payout)s to 1'), payout=payout)}"


@bp.app_template_global()
def version_words(game: str, rules: dict[str, Any]) -> str:
    """Return the rules a table version was played under, in words of the request's language:
    Casino War's decks and tie payout; for Sota its rule set's name and what differs from it."""
    if game == "casino_war":
        text = war_settings(rules)
        if rules.get("bonus", "none") != "none":
            text += ", " + gettext(N_("war tie bonus of an extra ante"))
        return text
    try:
        played = sota.SotaRules.from_dict(rules).to_dict()
    except CasinoError:  # a version stored before an option changed: shown as it is
        return ", ".join(f"{key} {value}" for key, value in sorted(rules.items()))
    nearest, differing = "nordic", dict(played)
    for name, preset in sota.PRESETS.items():
        changes = {
            key: value
            for key, value in played.items()
            if sota.SotaRules.from_dict(preset).to_dict()[key] != value
        }
        if len(changes) < len(differing):
            nearest, differing = name, changes
    title = gettext(PRESET_TITLES[nearest])
    if not differing:
        return title
    changed = "; ".join(
        f"{gettext(SOTA_OPTION_TEXT[key]['title'])}: {_option_value(key, value)}"
        for key, value in differing.items()
    )
    return gettext(N_("%(rules)s, but %(changes)s"), rules=title, changes=changed)


#: Each named value of a Sota option in the words the table's form gives it.
_SOTA_VALUE_WORDS: Final = {
    (option["name"], value): words for option in RULE_HELP for value, words in option["values"]
}


def _option_value(option: str, value: object) -> str:
    if value is None or value is False:
        return gettext("off")
    if value is True:
        return gettext("on")
    words = _SOTA_VALUE_WORDS.get((option, value))
    if words is None:  # a number (seats, a trick limit, a lead)
        return str(value)
    # The form's sentence, its full stop left out: the changes follow one another on a line.
    return gettext(words).removesuffix(".")


def _day_arg(name: str) -> str | None:
    return request.args.get(name, "").strip() or None


@bp.get("/ledger/math")
def math_export() -> ResponseReturnValue:
    """The math per version as a CSV or JSON Lines download (the page's date range)."""
    report = reports.house_math(get_session(), since=_day_arg("since"), until=_day_arg("until"))
    return table_download(
        reports.math_rows(report), reports.MATH_COLUMNS, request.args.get("format"), "house-math"
    )


# --- players ----------------------------------------------------------------------------------


@bp.get("/players/<id:user_id>")
def player(user_id: int) -> ResponseReturnValue:
    overview = reports.player_overview(get_session(), user_id, **player_cursors())
    # The role form sends a one-time key: a double submit changes (or proposes) it once.
    return render_template(
        "operator/player.html", p=overview, roles=ROLES, once=secrets.token_hex(16)
    )


class PlayerCursors(TypedDict):
    rounds_before: int | None
    transfers_before: int | None
    audit_before: int | None


def player_cursors() -> PlayerCursors:
    """The cursors of a player's lists given in the query string (also used by the API)."""
    return PlayerCursors(
        rounds_before=query_int("rounds_before", default=None),
        transfers_before=query_int("transfers_before", default=None),
        audit_before=query_int("audit_before", default=None),
    )


def parse_adjustment_amount(text: str, currency: str, direction: str) -> int:
    """Return the signed amount in minor units of what the operator typed.

    The amount is read as the page's language writes numbers, as the console shows balances:
    ``12.50`` in English, ``12,50`` in Finnish, Norwegian and Portuguese (groups of thousands
    allowed, a space for one where the language writes one). Chips take up to two decimals
    (``12,50`` → ``1250``), sweets are whole; ``direction`` is ``credit`` or ``debit``.

    :raises InvalidInput: for anything else, saying what is expected.
    """
    if direction not in ("credit", "debit"):
        raise InvalidInput(N_("Choose whether to credit or debit the player."), field="direction")
    if currency == "chips":
        number = typed_number(text)
        if number is None or number != number.quantize(Decimal("0.01")):
            raise InvalidInput(
                N_("Type the amount in chips, like 25 or 12.50 (at most two decimals)."),
                field="amount",
            )
        minor = int(number * 100)
    elif currency == "sweets":
        number = typed_number(text)
        if number is None or number != number.to_integral_value():
            raise InvalidInput(N_("Type the amount as a whole number of sweets."), field="amount")
        minor = int(number)
    else:
        raise InvalidInput(N_("Choose chips or sweets."), field="currency")
    if minor == 0:
        raise InvalidInput(N_("The amount must be more than zero."), field="amount")
    if minor > money.MAX_ADJUSTMENT:
        # Written in the language the refusal is read in (its amounts, :func:`written_now`).
        most = {"most": {currency: money.MAX_ADJUSTMENT}}
        raise InvalidInput(
            N_("One adjustment may be at most %(most)s."),
            params=written_now(most),
            amounts=most,
            field="amount",
        )
    return minor if direction == "credit" else -minor


def typed_number(text: str) -> Decimal | None:
    """Return the non-negative number typed, read in the request's language; None if it is not
    one (a sign, an exponent, a stray separator, or a group of the wrong size)."""
    locale = select_locale()
    group = get_group_symbol(locale)
    text = text.strip()
    if group.isspace():
        # Languages that group with a (narrow) no-break space are typed with a plain one.
        text = re.sub(r"[ \u00a0\u202f]", group, text)
    if not AMOUNT_CHARACTERS.fullmatch(text):
        return None
    try:
        number = parse_decimal(text, locale=locale, strict=True)
    except NumberFormatError:
        return None
    return number if number.is_finite() else None


def adjustment_refusal(error: CasinoError) -> str:
    """Return a refused adjustment's message as the console's form words it.

    A debit beyond the balance is said in chips or sweets, as the page shows balances, not in
    the engine's minor units.
    """
    currency = error.details.get("currency")
    held, debit = error.details.get("held"), error.details.get("debit")
    if isinstance(error, InsufficientFunds) and isinstance(held, int) and isinstance(debit, int):
        shown = chips_text if currency == "chips" else sweets_text
        return gettext(
            N_(
                "The player holds %(held)s; a debit of %(debit)s would take the balance below zero."
            ),
            held=shown(held),
            debit=shown(debit),
        )
    return error_message(error)


def adjustment_field(error: CasinoError) -> str | None:
    """Return the adjustment form's field a refusal is about, to be marked and focused: the one
    it names, the amount for a debit beyond the balance, or None."""
    field = error.details.get("field")
    if field in ADJUST_FIELDS:
        return str(field)
    return "amount" if isinstance(error, InsufficientFunds) else None


def _player_page_refusing(
    user_id: int, error: CasinoError, form: dict[str, str]
) -> ResponseReturnValue:
    """The player's page again, the refused adjustment beside its form and what was typed kept."""
    if not _about_the_form(error):
        raise error
    overview = reports.player_overview(get_session(), user_id, **player_cursors())
    page = render_template(
        "operator/player.html",
        p=overview,
        roles=ROLES,
        once=secrets.token_hex(16),
        adjust_error=adjustment_refusal(error),
        adjust_invalid=adjustment_field(error),
        adjust_form=form,
    )
    return page, status_of(error)


#: The adjustment form's fields, kept as typed when it is refused.
ADJUST_FIELDS: Final = ("direction", "currency", "amount", "reason")


def _adjust_form_refused(error: CasinoError) -> ResponseReturnValue:
    typed = {name: request.form.get(name, "") for name in ADJUST_FIELDS}
    user_id = (request.view_args or {})["user_id"]  # the route's, as the view was given it
    return _player_page_refusing(user_id, error, typed)


@bp.post("/players/<id:user_id>/adjust/preview")
@refusal_shown_by(_adjust_form_refused)
def adjust_preview(user_id: int) -> ResponseReturnValue:
    form = request.form
    currency = form.get("currency", "")
    amount = parse_adjustment_amount(form.get("amount", ""), currency, form.get("direction", ""))
    preview = reports.adjustment_preview(
        get_session(), g.user.id, user_id, currency, amount, form.get("reason", "")
    )
    once = secrets.token_urlsafe(16)  # a double click on "Apply" applies it once
    return render_template("operator/adjust_confirm.html", preview=preview, once=once)


@bp.post("/players/<id:user_id>/adjust")
def adjust(user_id: int) -> ResponseReturnValue:
    form = request.form
    text = form.get("amount", "")
    if not MINOR_TEXT.fullmatch(text):
        raise InvalidInput(N_("amount must be a whole number of minor units"), field="amount")
    currency = form.get("currency", "")
    try:
        done = money.request_adjustment(
            get_session(),
            g.user.id,
            user_id,
            currency,
            int(text),
            form.get("reason"),
            idempotency_key=form.get("once") or None,
        )
    except CasinoError as error:
        # Refused at the last step (the balance moved since the preview): the form again, as
        # the operator typed it in this page's language.
        minor = int(text)
        shown = chips if currency == "chips" else sweets
        typed = {
            "direction": "debit" if minor < 0 else "credit",
            "currency": currency,
            "amount": shown(abs(minor)),
            "reason": form.get("reason", ""),
        }
        return _player_page_refusing(user_id, error, typed)
    if done.approval is None:
        flash_words(N_("Adjustment applied and recorded in the audit log."), "ok")
    else:
        proposed = N_(
            "Adjustment proposed (#%(id)s): it applies once a second operator approves it."
        )
        flash_words(proposed, "ok", id=done.approval.id)
    return redirect(url_for(".player", user_id=user_id), code=303)


@bp.post("/players/<id:user_id>/lock")
def lock(user_id: int) -> ResponseReturnValue:
    locked = request.form.get("locked")
    if locked not in ("0", "1"):
        raise InvalidInput(N_("locked must be 0 or 1"), field="locked")
    user = accounts.set_locked(get_session(), g.user.id, user_id, locked == "1")
    done = N_("%(name)s is now locked.") if user.locked else N_("%(name)s is now unlocked.")
    flash_words(done, "ok", name=user.username)
    return redirect(url_for(".player", user_id=user_id), code=303)


@bp.post("/players/<id:user_id>/role")
def role(user_id: int) -> ResponseReturnValue:
    done = accounts.request_role_change(
        get_session(), g.user.id, user_id, request.form.get("role"), idempotency_key=form_key()
    )
    if done.done is not None:
        flash_words(ROLE_CHANGED[done.done.role], "ok", name=done.done.username)
    else:
        assert done.approval is not None
        proposed = N_(
            "Making %(name)s an operator proposed (#%(id)s): it applies once a second operator "
            "approves it."
        )
        name = accounts.get_user(get_session(), user_id).username
        flash_words(proposed, "ok", name=name, id=done.approval.id)
    return redirect(url_for(".player", user_id=user_id), code=303)


# --- tables -----------------------------------------------------------------------------------


@bp.get("/tables")
def tables() -> ResponseReturnValue:
    return _tables_page()


def _tables_page(refused: tuple[str, CasinoError] | None = None) -> str:
    """The tables' forms, each showing its table's settings; ``refused``: the table whose form
    was refused and why, its form showing what was typed."""
    t = reports.tables(get_session())
    shown = {name: _form_values(name, values) for name, values in t.settings.items()}
    if refused is not None:
        shown[refused[0]] = _typed_values(refused[0])
    # Each table's form sends a one-time key of its own: a double submit saves (or proposes) once.
    return render_template(
        "operator/tables.html",
        t=t,
        shown=shown,
        refused=(refused[0], error_message(refused[1])) if refused else None,
        preset_titles=PRESET_TITLES,
        once=secrets.token_hex(16),
    )


def _form_values(name: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """A table's settings as its form's fields hold them: text, bets in whole chips."""
    if name == "casino_war":
        whole = {option: str(values[option] // CHIP) for option in ("min_bet", "max_bet")}
        return {**{option: str(value) for option, value in values.items()}, **whole}
    return {
        "min_stake": str(values["min_stake"]),
        "max_stake": str(values["max_stake"]),
        "presets": list(values["presets"]),
        "custom_rules": bool(values["custom_rules"]),
    }


def _typed_values(name: str) -> dict[str, Any]:
    """What the refused form of table ``name`` sent, as its fields hold it."""
    form = request.form
    if name == "casino_war":
        fields = ("min_bet", "max_bet", "decks", "tie_payout", "burn", "bonus")
        return {field: form.get(field, "") for field in fields}
    return {
        "min_stake": form.get("min_stake", ""),
        "max_stake": form.get("max_stake", ""),
        "presets": form.getlist("presets"),
        "custom_rules": form.get("custom_rules") == "1",
    }


def _table_form_refused(error: CasinoError) -> ResponseReturnValue:
    name = (request.view_args or {})["name"]
    if name not in settings.TABLES:
        raise error
    return _tables_page((name, error)), status_of(error)


#: Each table option as the console's forms name it, in a refusal as in the form's checks.
TABLE_OPTION_TITLES: Final = {
    "min_bet": N_("minimum bet"),
    "max_bet": N_("maximum bet"),
    "decks": N_("number of decks"),
    "tie_payout": N_("tie payout"),
    "burn": N_("number of burned cards"),
    "bonus": N_("Bonus on a war tie"),
    "min_stake": N_("minimum stake"),
    "max_stake": N_("maximum stake"),
    "presets": N_("Presets players may pick"),
}


def _casino_war_form() -> dict[str, Any]:
    titles = TABLE_OPTION_TITLES
    return {
        "min_bet": form_chips("min_bet", label=titles["min_bet"]),
        "max_bet": form_chips("max_bet", label=titles["max_bet"]),
        "decks": form_whole("decks", label=titles["decks"]),
        "tie_payout": form_whole("tie_payout", label=titles["tie_payout"]),
        "burn": form_whole("burn", label=titles["burn"]),
        "bonus": request.form.get("bonus", ""),
    }


def _sota_form() -> dict[str, Any]:
    titles = TABLE_OPTION_TITLES
    return {
        "min_stake": form_whole("min_stake", label=titles["min_stake"]),
        "max_stake": form_whole("max_stake", label=titles["max_stake"]),
        "presets": request.form.getlist("presets"),
        "custom_rules": request.form.get("custom_rules") == "1",
    }


def _table_refusal(error: InvalidRules) -> InvalidRules:
    """A refused table setting as the console's form words it: in its names and its units."""
    params = error.params
    if params.get("option") in ("min_bet", "max_bet") and "low" in params:
        # The engine counts bets in hundredths of a chip; the form, in whole chips.
        whole = {"low": int(str(params["low"])) // CHIP, "high": int(str(params["high"])) // CHIP}
        in_chips = InvalidRules(error.template, params={**params, **whole})
        in_chips.details = dict(error.details)
        error = in_chips
    return in_words(error, TABLE_OPTION_TITLES)


def _changed_since_drawn(typed: dict[str, Any]) -> dict[str, Any]:
    """The options the form changes from the settings it was drawn with (its ``drawn`` field):
    a change saved by someone else since the page was drawn is kept, not put back by the
    options left as they were shown. A form without the field sends every option.

    :raises InvalidInput: for a ``drawn`` field that is no settings object.
    """
    text = request.form.get("drawn")
    if text is None:
        return typed
    try:
        drawn = json.loads(text)
    except (ValueError, RecursionError):  # nested deeper than the parser goes: garbled too
        drawn = None
    if not isinstance(drawn, dict):
        raise InvalidInput(GARBLED, field="drawn")
    return {option: value for option, value in typed.items() if not _same(drawn.get(option), value)}


def _same(shown: object, typed: object) -> bool:
    """Whether an option was sent as it was shown (a list of checkboxes in any order)."""
    if isinstance(shown, list) and isinstance(typed, list):
        return sorted(map(str, shown)) == sorted(map(str, typed))
    return shown == typed


@bp.post("/tables/<name>")
@refusal_shown_by(_table_form_refused)
def update_table(name: str) -> ResponseReturnValue:
    forms = {"casino_war": _casino_war_form, "sota": _sota_form}
    if name not in forms:
        abort(404)
    changes = _changed_since_drawn(forms[name]())
    if not changes:
        flash_words(N_("Nothing to save: the settings are as they were."), "ok")
        return redirect(url_for(".tables"), code=303)
    try:
        done = settings.request_table_change(
            get_session(), g.user.id, name, changes, idempotency_key=form_key()
        )
    except InvalidRules as error:
        raise _table_refusal(error) from error
    saved = {
        "casino_war": N_("The Casino War table's settings are saved; they apply to new rounds."),
        "sota": N_("The Sota table's settings are saved; they apply to new rounds."),
    }
    if done.approval is None:
        flash_words(saved[name], "ok")
    else:
        proposed = N_(
            "The change is proposed (#%(id)s): it applies to new rounds once a second "
            "operator approves it."
        )
        flash_words(proposed, "ok", id=done.approval.id)
    return redirect(url_for(".tables"), code=303)
