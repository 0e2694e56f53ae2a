"""The test process's apps share compiled SQL (``shared_compiles``): a second engine finds what
the first compiled, and each engine still answers from its own database."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from sota_casino.db import make_engine


def test_a_second_engine_reuses_the_first_engines_statement_and_reads_its_own_rows(
    tmp_path: Path,
) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("n", sa.Integer))
    query = sa.select(table.c.n).where(table.c.n > sa.bindparam("low"))
    seen = []
    for rows in ((1, 2, 3), (7, 8)):
        engine = make_engine(f"sqlite:///{tmp_path / f'{len(seen)}.db'}")
        table.create(engine)
        with engine.begin() as connection:
            connection.execute(table.insert(), [{"n": n} for n in rows])
            result = connection.execute(query, {"low": 1})
            seen.append((result.scalars().all(), result.context.cache_hit))
        engine.dispose()
    dialect = sa.dialects.sqlite.dialect
    assert seen[0][0] == [2, 3]
    assert seen[1] == ([7, 8], dialect.CACHE_HIT)
