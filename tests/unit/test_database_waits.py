"""The database waits a request may spend are checked against gunicorn's timeout: a wait as
long as the worker may live would end in gunicorn's HTML 500, not the API's 503."""

from __future__ import annotations

from sota_casino import config


def test_the_default_waits_fit_the_default_worker_timeout() -> None:
    assert config.database_wait_problems(config.defaults(), worker_timeout=30) == []


def test_a_wait_over_half_the_worker_timeout_is_named() -> None:
    settings = config.defaults() | {"DB_STATEMENT_TIMEOUT_MS": 15_001}
    problems = config.database_wait_problems(settings, worker_timeout=30)
    assert len(problems) == 1 and problems[0].startswith("DB_STATEMENT_TIMEOUT_MS=15001 ")
    assert config.database_wait_problems(settings, worker_timeout=31) == []


def test_no_wait_without_bound_passes() -> None:
    settings = config.defaults() | {"DB_LOCK_TIMEOUT_MS": 0}
    assert config.database_wait_problems(settings, worker_timeout=30) == [
        "DB_LOCK_TIMEOUT_MS must be a whole number of milliseconds above 0, not 0"
    ]


def test_the_waits_are_read_from_the_environment() -> None:
    found = config.from_environment(
        {"DB_LOCK_TIMEOUT_MS": "750", "DB_STATEMENT_TIMEOUT_MS": "2000"}
    )
    assert found == {"DB_LOCK_TIMEOUT_MS": 750, "DB_STATEMENT_TIMEOUT_MS": 2000}
