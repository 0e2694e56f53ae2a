"""Domain errors: every refusal the casino can give, each with a stable code.

The web layer maps these kinds to HTTP statuses in one place (``web/errors.py``); ``code`` is
what API clients see.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence

from .marks import N_


class CasinoError(Exception):
    """Base of every refusal; ``code`` is stable (the web layer picks the HTTP status)."""

    code = "casino_error"

    def __init__(
        self,
        message: str | tuple[str, str] = "",
        *,
        params: Mapping[str, object] | None = None,
        words: Iterable[str] = (),
        **details: object,
    ) -> None:
        singular, plural = message if isinstance(message, tuple) else (message, "")
        #: The English message id (a ``%(name)s`` template when ``params`` are given): the web
        #: layer translates it by this id and fills in the same ``params``.
        self.template = singular or (self.__class__.__doc__ or self.code).strip()
        #: The plural of ``template`` (``Nn_``), chosen by the count ``params["num"]``; or "".
        self.plural = plural
        self.params = dict(params or {})
        #: The names of ``params`` that are message ids themselves (a field's label, a unit):
        #: translated with the message, in the language it is read in.
        self.words = frozenset(words)
        english = plural if plural and self.params.get("num") != 1 else self.template
        self.message = english % self.params if self.params else english
        super().__init__(self.message)
        self.details = details


class InvalidInput(CasinoError):
    """The request is not valid."""

    code = "invalid_input"


class InvalidRules(InvalidInput):
    """A rule option or its value is unknown or out of range."""

    code = "invalid_rules"


def refuse_unknown_options(given: Iterable[object], valid: Sequence[str]) -> None:
    """Refuse options outside ``valid``, naming the first unknown one and the valid ones.

    :raises InvalidRules: if any option given is unknown.
    """
    unknown = sorted(str(key) for key in given if key not in valid)
    if unknown:
        raise InvalidRules(
            N_("unknown option %(name)s; valid: %(valid)s"),
            params={"name": repr(unknown[0]), "valid": ", ".join(valid)},
            option=unknown[0],
        )


class InvalidBet(InvalidInput):
    """The amount is not a valid bet at this table."""

    code = "invalid_bet"


class SignatureRequired(InvalidInput):
    """With a key registered, every bet, decision and move must carry the player's signature."""

    code = "signature_required"


class SignatureInvalid(InvalidInput):
    """The signature is not the registered key's over this bet's or action's document."""

    code = "signature_invalid"


class InvalidAction(CasinoError):
    """This step is not allowed in the round's present state."""

    code = "invalid_action"


class DecisionNotDue(InvalidAction):
    """The round is not waiting for a decision."""

    code = "decision_not_due"


class MoveNotDue(InvalidAction):
    """The game is not waiting for that move."""

    code = "move_not_due"


class RoundSettled(InvalidAction):
    """The round is already settled."""

    code = "round_settled"


class InsufficientFunds(CasinoError):
    """The balance does not cover this amount."""

    code = "insufficient_funds"


class NotFound(CasinoError):
    """No such thing, or it is not yours."""

    code = "not_found"


class Forbidden(CasinoError):
    """You may not do this."""

    code = "forbidden"


class Unauthorized(CasinoError):
    """Log in first, or the credentials are wrong."""

    code = "unauthorized"


class RetryLater(CasinoError):
    """Not now; try again after the seconds given."""

    def __init__(
        self,
        message: str | tuple[str, str] = "",
        *,
        retry_after: int,
        params: Mapping[str, object] | None = None,
        words: Iterable[str] = (),
        **details: object,
    ) -> None:
        super().__init__(message, params=params, words=words, **details)
        #: Whole seconds (at least 1) until asking again is worth it: its ``Retry-After``.
        self.retry_after = retry_after


class RateLimited(RetryLater):
    """Too many attempts; wait a little and try again."""

    code = "rate_limited"


class Conflict(CasinoError):
    """The request conflicts with the present state."""

    code = "conflict"


class RoundOpen(Conflict):
    """A round of this seed pair is still open; finish it first."""

    code = "round_open"


class RulesChanged(Conflict):
    """The table's rules are not those the bet was sent under; look at them again."""

    code = "rules_changed"


class NonceNotNext(Conflict):
    """The bet names a seed pair and nonce that are not the next to deal; sign it again."""

    code = "nonce_not_next"


class NotYetAnchored(Conflict, RetryLater):
    """Not in a signed checkpoint yet; ask again after the seconds given."""

    code = "not_yet_anchored"


class ApprovalRequired(Conflict):
    """This change needs a second operator's approval: propose it instead."""

    code = "approval_required"


class ProposalPending(Conflict):
    """The same change is proposed already and waits for a second operator."""

    code = "proposal_pending"


class ProposerNotOperator(Conflict):
    """Whoever proposed this change is no operator now: it cannot be approved."""

    code = "proposer_not_operator"


class OwnApproval(Forbidden):
    """An operator may not approve or reject a change they proposed."""

    code = "own_approval"


class TopupNotAllowed(Conflict):
    """A top-up is given only when the balance is low, at most once a day."""

    code = "topup_not_allowed"


class IdempotencyMismatch(InvalidInput):
    """This Idempotency-Key was already used with another request body."""

    code = "idempotency_mismatch"


class Unavailable(RetryLater):
    """The casino cannot reach its records right now; try again shortly."""

    code = "unavailable"
