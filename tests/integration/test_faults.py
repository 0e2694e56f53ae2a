"""Short fault runs (``python -m ops.faults`` runs them long): kill -9 of a gunicorn worker and
of the master under load, and PostgreSQL ending the app's connections under load. Every
acknowledged round stays, open rounds are decided afterwards, the books check, no 500."""

from __future__ import annotations

import pytest

from ops import faults

pytestmark = pytest.mark.slow


def assert_clean(figures: dict) -> None:
    assert figures["passed"], figures
    assert figures["acknowledged"] > 0 and figures["acknowledged_lost"] == 0
    assert figures["server_errors"] == 0


@pytest.mark.parametrize("mode", ["kill-worker", "kill-master"])
def test_killing_gunicorn_under_load_loses_no_acknowledged_round(mode: str) -> None:
    figures = faults.run_mode(mode, seconds=6, database_url=None)
    assert_clean(figures)
    if mode == "kill-master":
        assert figures["restarted"] and figures["orphans_gone_s"] is not None


@pytest.mark.postgres
def test_postgres_dropping_the_apps_connections_under_load_is_survived(
    postgres_database: str,
) -> None:
    figures = faults.run_mode("pg-restart", seconds=6, database_url=None, how="terminate")
    assert_clean(figures)
