"""Short fault runs (``python -m ops.faults`` runs them long): kill -9 of a gunicorn worker and
of the master under load, and PostgreSQL ending the app's connections under load. Every
acknowledged round stays, open rounds are decided afterwards, the books check, no 500."""

from __future__ import annotations

import socket
import threading

import pytest

from ops import faults


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


@pytest.mark.skipif(
    not faults.loop_devices_work(), reason="needs root and loop devices (losetup, mkfs.ext4)"
)
def test_the_database_disk_turning_read_only_under_load_loses_nothing() -> None:
    """ext4 on a loop device aborts its journal under load and turns read-only: bets are clean
    503s, reads still answer, and after a check and a new service nothing acknowledged is
    missing or changed (with ``synchronous=NORMAL`` a third of them were), the books check."""
    figures = faults.run_mode("read-only", seconds=6, database_url=None)
    assert_clean(figures)
    assert figures["fault_statuses"].get("503", 0) > 0, figures
    assert set(figures["fault_statuses"]) <= {"201", "503", "connection error"}, figures
    reads = figures["reads_during"]
    assert figures["read_errors"] == 0, reads
    for read in ("/api/v1/rounds", "/api/v1/me", "/api/v1/rounds/{id}/receipt"):
        assert reads.get(f"{read} 200", 0) > 0, reads
    assert figures["fsck_exit"] in (0, 1) and figures["recovered"], figures


def test_an_answer_cut_off_midway_is_a_lost_connection_to_the_load() -> None:
    """A worker killed while writing an answer leaves its headers and part of its body; the
    load counts that as a connection error instead of its thread dying."""
    with socket.create_server(("127.0.0.1", 0)) as server:

        def answer_half() -> None:
            client, _ = server.accept()
            with client:
                client.recv(65536)
                client.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 433\r\n\r\n{")
                # The request's body may come after its headers: read it until the load hangs
                # up, or closing with it unread would reset the connection instead.
                client.shutdown(socket.SHUT_WR)
                while client.recv(65536):
                    pass

        thread = threading.Thread(target=answer_half)
        thread.start()
        with pytest.raises(ConnectionError, match="cut off"):
            faults.request(server.getsockname()[1], "POST", "/api/v1/casino-war/rounds", {})
        thread.join(10)
