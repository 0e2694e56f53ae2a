"""The console's controls: alert rules and the alerts they raise, four-eyes approvals, and the
time zone each member of staff reads times in; with the helpers every console page uses to
show a person by name and a time in that zone (UTC beside it).

The routes hang on the console's blueprint, so its staff-only rule guards them too.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo
from zoneinfo import ZoneInfoNotFoundError

from flask import g
from flask import redirect
from flask import render_template
from flask import request
from flask import url_for
from flask.typing import ResponseReturnValue
from markupsafe import Markup
from markupsafe import escape

from ..core.errors import CasinoError
from ..core.errors import InvalidInput
from ..core.marks import N_
from ..core.money import CURRENCIES
from ..db import get_session
from ..services import accounts
from ..services import alerts
from ..services import approvals
from ..services import reports
from .errors import status_of
from .format import chips
from .format import chips_text
from .format import sweets_text
from .i18n import Phrase
from .i18n import error_message
from .i18n import flash_phrase
from .i18n import flash_words
from .i18n import gettext
from .i18n import gettext_counting
from .i18n import phrase
from .i18n import phrase_text
from .inputs import form_key
from .inputs import form_whole
from .inputs import query_int
from .operator import bp
from .operator import parse_adjustment_amount
from .operator import problem_words
from .operator import refusal_shown_by
from .operator import typed_number
from .paths import is_local_path
from .sota import PRESET_TITLES

#: How the console names the kinds of alert rule.
RULE_KINDS: Final = {
    alerts.LARGE_WIN: N_("a large win in one round"),
    alerts.PLAYER_ADJUSTMENTS: N_("adjustments to one player over a period"),
    alerts.OPERATOR_ADJUSTMENTS: N_("adjustments by one operator over a period"),
    alerts.CHECK_FAILED: N_("a failed standing check"),
}


#: A table's settings as its form names them (the form reads them here): its approvals and its
#: history say a change so.
SETTING_LABELS: Final = {
    "min_bet": N_("Minimum bet (whole chips)"),
    "max_bet": N_("Maximum bet (whole chips)"),
    "decks": N_("Decks"),
    "tie_payout": N_("Tie bet pays (to 1; 0 = no tie bet)"),
    "burn": N_("Burned cards before war"),
    "bonus": N_("Bonus on a war tie"),
    "min_stake": N_("Minimum stake (sweets)"),
    "max_stake": N_("Maximum stake (sweets)"),
    "presets": N_("Presets players may pick"),
    "custom_rules": N_("Players may also choose their own rule set"),
}
#: The war-tie bonus as the form offers it.
BONUS_WORDS: Final = {
    "none": N_("none (raise wins even money)"),
    "ante": N_("ante (extra win equal to the ante)"),
}


@bp.app_template_global()
def setting_label(name: str) -> str:
    """A table setting's name as its form shows it, in the request's language."""
    return gettext(SETTING_LABELS[name]) if name in SETTING_LABELS else name


@bp.app_template_global()
def setting_change(name: str, after: object, before: object = ...) -> Markup:
    """A table setting's change in the form's words: ``Maximum bet (whole chips): 500 → 400``,
    or ``…: 400`` where the new value alone is known (``before`` not given: a proposal)."""
    shown = [setting_value(name, value) for value in (before, after) if value is not ...]
    return escape(setting_label(name)) + Markup(": ") + Markup(" → ").join(map(escape, shown))


@bp.app_template_global()
def setting_value(name: str, value: object) -> str:
    """A table setting's value as its form shows it: bets in whole chips, the bonus in words."""
    if name in ("min_bet", "max_bet") and isinstance(value, int):
        return chips(value)
    if name == "bonus" and isinstance(value, str) and value in BONUS_WORDS:
        return gettext(BONUS_WORDS[value])
    if name == "presets" and isinstance(value, list):
        return ", ".join(gettext(PRESET_TITLES.get(str(p), str(p))) for p in value)
    if isinstance(value, bool):
        return gettext(N_("yes") if value else N_("no"))
    return "—" if value is None else str(value)


# --- people and times, as every console page shows them ---------------------------------------


@bp.app_template_global()
def person(actor: str | None) -> str:
    """The name of ``user:N`` (others, such as ``system``, as they are), once per request."""
    if not actor:
        return "—"
    known: dict[str | None, str] = g.setdefault("people", {})
    if actor not in known:
        known.update(reports.people(get_session(), {actor}))
    return known.get(actor, actor)


def _moment(stamp: str | datetime | None) -> datetime | None:
    if stamp is None or isinstance(stamp, datetime):
        return stamp
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


#: A date as :func:`zoned_text` writes it.
_DATE = re.compile(r"\d{4}-\d\d-\d\d")


@bp.app_template_filter("zoned")
def zoned(stamp: str | datetime | None) -> Markup:
    """:func:`zoned_text` for a page: each date in a ``span.date``, which keeps it on one line
    (a browser breaks a line at a hyphen, "2026-12-" above "06")."""
    return Markup(
        _DATE.sub(
            lambda date: f'<span class="date">{date[0]}</span>', str(escape(zoned_text(stamp)))
        )
    )


def zoned_text(stamp: str | datetime | None) -> str:
    """A moment in the reader's chosen zone with UTC beside it: ``2026-12-01 15:31:13 CET
    (14:31:13 UTC)``; in UTC alone for a reader who chose none."""
    moment = _moment(stamp)
    if moment is None:
        return "–" if stamp is None else str(stamp)
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    user = g.get("user")
    zone = getattr(user, "time_zone", None)
    utc = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    if not zone:
        return utc
    try:
        local = moment.astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        # A zone chosen once and gone from this machine's zone database since: UTC alone.
        return utc
    same_day = local.date() == moment.date()
    return f"{local:%Y-%m-%d %H:%M:%S} {local.tzname()} ({utc[11:] if same_day else utc})"


@bp.app_template_global()
def console_waiting() -> dict[str, int]:
    """What the console's navigation says is waiting: open alerts and pending proposals."""
    db = get_session()
    return {"alerts": alerts.open_count(db), "approvals": approvals.pending_count(db)}


@bp.app_template_global()
def time_zones() -> tuple[str, ...]:
    return accounts.time_zones()


def _time_zone_back() -> str:
    """The console page the time-zone form goes back to (the audit log for any other).

    The page must be a path of this site as well: a newline in it could not be put in the
    ``Location`` header, and a browser drops tabs and reads ``\\`` as ``/``.
    """
    back = request.form.get("next", "")
    return back if is_local_path(back) and back.startswith("/operator") else url_for(".audit_log")


def _time_zone_refused(error: CasinoError) -> ResponseReturnValue:
    # The form again with the reason, what was typed kept, and the page to go back to.
    page = render_template(
        "operator/time_zone.html",
        error=error_message(error),
        typed=request.form.get("time_zone", ""),
        back=_time_zone_back(),
    )
    return page, status_of(error)


@bp.post("/me/time-zone")
@refusal_shown_by(_time_zone_refused)
def set_time_zone() -> ResponseReturnValue:
    user = accounts.set_time_zone(get_session(), g.user.id, request.form.get("time_zone", ""))
    flash_words(
        N_("Times are now shown in %(zone)s, with UTC beside them."),
        "ok",
        zone=user.time_zone or "UTC",
    )
    return redirect(_time_zone_back(), code=303)


# --- four eyes ----------------------------------------------------------------------------------


@bp.get("/approvals")
def approvals_page() -> ResponseReturnValue:
    status = request.args.get("status") or "pending"
    found = approvals.listing(
        get_session(), status=status, cursor=query_int("cursor", default=None), limit=50
    )
    # Each decision button sends a one-time key of its own: a double click decides once.
    once = secrets.token_hex(16)
    return render_template("operator/approvals.html", found=found, status=status, once=once)


def _decide(approval_id: int, approve: bool) -> ResponseReturnValue:
    decided = approvals.decide(
        get_session(),
        g.user.id,
        approval_id,
        approve,
        request.form.get("note") or None,
        idempotency_key=form_key(),
    )
    if approve:
        flash_words(N_("Proposal #%(id)s approved and applied."), "ok", id=decided.id)
    else:
        flash_words(N_("Proposal #%(id)s rejected; nothing changed."), "ok", id=decided.id)
    return redirect(url_for(".approvals_page"), code=303)


@bp.post("/approvals/<id:approval_id>/approve")
def approve(approval_id: int) -> ResponseReturnValue:
    return _decide(approval_id, True)


@bp.post("/approvals/<id:approval_id>/reject")
def reject(approval_id: int) -> ResponseReturnValue:
    return _decide(approval_id, False)


# --- alerts ---------------------------------------------------------------------------------------


def alert_message(alert: alerts.AlertView, *, reason_worded: bool = False) -> str:
    """An alert's message in the reader's language, its amounts in chips or sweets.

    A failed check's reason is the check's English, as its verdict says it; ``reason_worded``
    (the console) words it in the reader's language where the check gave it as a message id
    (:data:`alerts.PROBLEM`), as the ledger and audit pages word the checks' findings.

    An alert raised before messages were kept as ids (no params), or one whose id this
    version does not know, reads as it was stored.
    """
    if alert.params is None or alert.message not in alerts.MESSAGES:
        return alert.message
    params = dict(alert.params)
    shown = chips_text if params.get("currency") == "chips" else sweets_text
    for name in alerts.AMOUNTS:
        if isinstance(params.get(name), int):
            params[name] = shown(params[name])
    found = params.get(alerts.PROBLEM)
    if reason_worded and isinstance(found, Mapping) and isinstance(found.get("message"), str):
        params["reason"] = problem_words(found)
    return gettext_counting(alert.message, alerts.COUNTS, **params)


def alert_in_words(alert: alerts.AlertView, *, reason_worded: bool = False) -> alerts.AlertView:
    """The alert as the console and the API show it: its message filled in and translated
    (a failed check's reason too on the console, ``reason_worded``)."""
    return replace(alert, message=alert_message(alert, reason_worded=reason_worded))


def alerts_in_words(page: alerts.AlertPage, *, reason_worded: bool = False) -> alerts.AlertPage:
    alerts_shown = [alert_in_words(alert, reason_worded=reason_worded) for alert in page.alerts]
    return replace(page, alerts=alerts_shown)


def rule_in_words(rule: alerts.AlertRuleView) -> alerts.AlertRuleView:
    """The rule as the console and the API show it: described in the reader's language, its
    threshold in chips or sweets."""
    return replace(rule, description=phrase_text(rule_phrase(rule)))


def rule_phrase(rule: alerts.AlertRuleView) -> Phrase:
    """The rule's description as a phrase, worded in the language it is read in."""
    shown = "chips" if rule.currency == "chips" else "sweets"
    return phrase(
        alerts.RULE_WORDS[rule.kind],
        {"threshold": {shown: rule.threshold}, "period_hours": rule.period_hours},
        counts=alerts.COUNTS,
    )


def rules_in_words(found: alerts.AlertRuleList) -> alerts.AlertRuleList:
    return replace(found, rules=[rule_in_words(rule) for rule in found.rules])


@bp.get("/alerts")
def alerts_page() -> ResponseReturnValue:
    return _alerts_page()


def _alerts_page(rule_error: str | None = None, rule_form: dict[str, str] | None = None) -> str:
    """The alerts and their rules; with a refused rule's reason beside its form, as typed."""
    db = get_session()
    listed = alerts.listing(db, cursor=query_int("cursor", default=None), limit=50)
    found = alerts_in_words(listed, reason_worded=True)
    return render_template(
        "operator/alerts.html",
        rules=rules_in_words(alerts.rules(db)).rules,
        found=found,
        kinds=RULE_KINDS,
        currencies=CURRENCIES,
        rule_error=rule_error,
        rule_form=rule_form or {},
    )


#: What a threshold is typed as, by currency (an adjustment's amount rules, worded for it).
THRESHOLD_EXPECTED: Final = {
    "chips": N_("Type the threshold in chips, like 25 or %(example)s (at most two decimals)."),
    "sweets": N_("Type the threshold as a whole number of sweets."),
}


def _threshold(kind: str, currency: str) -> int:
    """The threshold typed as chips (to the hundredth) or whole sweets, in minor units."""
    if kind == alerts.CHECK_FAILED:
        return 0
    text = request.form.get("threshold", "").strip()
    if typed_number(text) == 0:  # nothing (any amount raises it), written as the page writes 0
        return 0
    try:
        return parse_adjustment_amount(text, currency, "credit")
    except InvalidInput as exc:
        if exc.details.get("field") != "amount":
            raise
        # The example is written as the page writes chips: 12,50 where a comma is the point.
        raise InvalidInput(
            THRESHOLD_EXPECTED[currency], params={"example": chips(1250)}, field="threshold"
        ) from None


#: The alert rule form's fields, kept as typed when a rule is refused.
RULE_FIELDS: Final = ("kind", "currency", "threshold", "period_hours")


def _rule_refused(error: CasinoError) -> ResponseReturnValue:
    # The form again, its refusal beside it and what was typed kept (not a dead end).
    typed = {name: request.form.get(name, "") for name in RULE_FIELDS}
    typed["field"] = str(error.details.get("field") or "")  # the control to focus
    return _alerts_page(error_message(error), typed), status_of(error)


@bp.post("/alerts/rules")
@refusal_shown_by(_rule_refused)
def create_rule() -> ResponseReturnValue:
    form = request.form
    kind, currency = form.get("kind", ""), form.get("currency", "")
    if kind != alerts.CHECK_FAILED and currency not in CURRENCIES:
        raise InvalidInput(N_("Choose chips or sweets."), field="currency")
    rule = alerts.create_rule(
        get_session(),
        g.user.id,
        kind,
        currency if kind != alerts.CHECK_FAILED else None,
        _threshold(kind, currency),
        form_whole("period_hours", label=N_("period in hours")),
    )
    # Its description a phrase of its own: the next page words it in the language it is read in.
    added = N_("Alert rule #%(id)s added: %(rule)s.")
    flash_phrase(phrase(added, {"id": rule.id, "rule": rule_phrase(rule)}), "ok")
    return redirect(url_for(".alerts_page"), code=303)


@bp.post("/alerts/rules/<id:rule_id>/enabled")
def rule_enabled(rule_id: int) -> ResponseReturnValue:
    enabled = request.form.get("enabled")
    if enabled not in ("0", "1"):
        raise InvalidInput(N_("enabled must be 0 or 1"), field="enabled")
    rule = alerts.set_enabled(get_session(), g.user.id, rule_id, enabled == "1")
    if rule.enabled:
        flash_words(N_("Alert rule #%(id)s is on."), "ok", id=rule.id)
    else:
        flash_words(N_("Alert rule #%(id)s is off."), "ok", id=rule.id)
    return redirect(url_for(".alerts_page"), code=303)


@bp.post("/alerts/<id:alert_id>/acknowledge")
def acknowledge(alert_id: int) -> ResponseReturnValue:
    alerts.acknowledge(get_session(), g.user.id, alert_id)
    flash_words(N_("Alert #%(id)s acknowledged."), "ok", id=alert_id)
    return redirect(url_for(".alerts_page"), code=303)
