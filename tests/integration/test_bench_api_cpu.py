"""``python -m bench api_cpu`` in a short mode: each scenario's requests answered as the load
sends them, and a CPU figure for each, on the test's database."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from bench import bench_api_cpu


def test_the_cpu_figures_come_from_answered_requests(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_api_cpu, "ROUNDS", 3)
    monkeypatch.setattr(bench_api_cpu, "BATCHES", 1)
    # Each request asserts its own answer (201, or 200 for a war decision) inside measure().
    cpu = bench_api_cpu.measure(db_url, tmp_path)
    assert set(cpu) == {"baseline", "casino_war", "sota"}
    assert all(value > 0 for value in cpu.values())
    # It leaves the test's database as it found it: the baseline's table is dropped again.
    engine = sa.create_engine(db_url)
    try:
        assert "bench_baseline_rows" not in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()
