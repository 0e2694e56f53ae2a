"""The OpenAPI document's links against the code, by schemathesis's stateful phase: sequences of
calls that follow the document's ``links`` (a bet's round to its decision, receipt and proof; a
game to its moves; a seed pair to its bundle; a list to its next page), with every check on,
as a player and as an operator. A link that feeds a wrong value, one that names something its
source's call or answer may lack, or an answer that a later call contradicts (a round just
created that its GET cannot find), fails here.

Each scenario plays as a new account, so its balance and open rounds are its own, and its token
must still work when it ends: the phase calls only operations that links join, and revoking a
token (which ends the one it is sent with) is joined to none; were it ever called, the calls
after it would meet only 401s, which the end of the scenario reports. The deals
are still the service's own randomness: a bet that ties one time settles the next, so a
replayed scenario may take another path, which Hypothesis reports as a flaky strategy;
schemathesis's own runner then starts a new run, and so does :func:`explore`. Every check's
failure is kept as it happens, whatever Hypothesis makes of it afterwards.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings
from hypothesis.errors import FlakyStrategyDefinition
from operator_support import add_user
from operator_support import bearer
from schemathesis.core.result import Ok
from schemathesis.core.transforms import UNRESOLVABLE
from test_schemathesis import config_of
from test_schemathesis import send_whole_numbers

#: Scenarios per role: about 45 s in all on two shared cores.
SCENARIOS = {"player": 150, "operator": 100}
STEPS = 25
#: New runs after a flaky replay, at most.
RUNS = 5


@dataclass
class Exploration:
    """What one stateful exploration did and found."""

    scenarios: int = 0
    calls: int = 0
    #: link name → statuses of the calls that followed it with a value it carried
    followed: dict[str, Counter[int]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    runs: int = 0
    #: links followed with an expression that named nothing of their source's call or answer
    unresolved: set[str] = field(default_factory=set)

    def succeeded_after_link(self) -> bool:
        """Whether a call made with a value a link carried succeeded."""
        return any(status < 300 for statuses in self.followed.values() for status in statuses)


def unresolved(transition: Any) -> list[str]:
    """The expressions of a followed link that could not be read ("Could not resolve parameter"
    in schemathesis's report), but a list's first item: an empty list has none to follow."""
    return [
        f"{transition.id}: {name} via {extracted.definition}"
        for container in transition.parameters.values()
        for name, extracted in container.items()
        if isinstance(extracted.value, Ok)
        and extracted.value.ok() is UNRESOLVABLE
        and not re.search(r"/[0-9]+(/|$)", str(extracted.definition))
    ]


def state_machine(app: Flask, role: str, seen: Exploration) -> Any:
    """schemathesis's state machine over the operations ``role`` may call, as ``role``."""
    token: dict[str, str] = {}
    accounts = itertools.count()
    # The document's own links only: schemathesis would also infer some from the schemas' names.
    config = config_of(app, phases={"stateful": {"inference": {"algorithms": []}}})
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app, config=config)
    if role == "player":
        schema = schema.exclude(tag="operator")

    @schema.auth()
    class Bearer:
        """The scenario's account on every call (schemathesis also calls without it, and with a
        wrong one, to see that the service refuses)."""

        def get(self, _case: Any, _context: Any) -> str:
            return "the scenario's"  # schemathesis keeps this; set() reads the current one

        def set(self, case: Any, _data: str, _context: Any) -> None:
            case.headers = {**(case.headers or {}), **token}

    send_whole_numbers(schema)

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            name = f"sf{role}{next(accounts)}"
            add_user(app, name, role)
            token.update(bearer(app, name))
            seen.scenarios += 1

        def step(self, input: Any) -> Any:
            output = super().step(input)
            seen.calls += 1
            if input.transition is not None:
                seen.unresolved.update(unresolved(input.transition))
            if input.transition is not None and input.is_applied:
                statuses = seen.followed.setdefault(input.transition.id, Counter())
                statuses[output.response.status_code] += 1
            return output

        def validate_response(self, response: Any, case: Any, *args: Any, **kwargs: Any) -> None:
            try:
                super().validate_response(response, case, *args, **kwargs)
            except Exception as failure:
                seen.failures.append(f"{case.operation.label}: {failure}")
                raise

        def teardown(self) -> None:
            if app.test_client().get("/api/v1/me", headers=token).status_code != 200:
                seen.failures.append("the scenario's token was ended: the calls after met a 401")
            super().teardown()

    return Workflow


def explore(app: Flask, role: str) -> Exploration:
    """Run the stateful phase for ``role``'s :data:`SCENARIOS` (new runs after a flaky replay),
    and more until a call that followed a link succeeded: which links Hypothesis walks is random,
    and a dozen scenarios now and then follow none."""
    seen = Exploration()
    machine = state_machine(app, role, seen)
    while (
        (seen.scenarios < SCENARIOS[role] or not seen.succeeded_after_link())
        and seen.runs < RUNS
        and not seen.failures
    ):
        seen.runs += 1
        try:
            machine.run(
                settings=settings(
                    max_examples=max(SCENARIOS[role] - seen.scenarios, SCENARIOS[role] // 2),
                    stateful_step_count=STEPS,
                    deadline=None,
                    database=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
            )
        except FlakyStrategyDefinition:
            continue  # the deals took another path on a replay; the failures are kept above
    return seen


@pytest.mark.parametrize("role", ["player", "operator"])
def test_calls_that_follow_the_documents_links_pass_every_check(
    make_app: Any, role: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = make_app(SIGNUPS_PER_ADDRESS=10**6, LOGIN_ATTEMPTS=10**6)
    started = time.monotonic()
    seen = explore(app, role)
    with capsys.disabled():
        print(
            f"\n{role}: {seen.scenarios} scenarios, {seen.calls} calls in {seen.runs} runs, "
            f"{time.monotonic() - started:.1f} s; links followed:"
        )
        for name, statuses in sorted(seen.followed.items()):
            print(f"  {dict(statuses)} {name}")
    assert seen.failures == []
    assert seen.unresolved == set()
    assert seen.scenarios >= SCENARIOS[role] // 2
    # The links carried real values into later calls, and some of those calls succeeded.
    assert seen.succeeded_after_link()
