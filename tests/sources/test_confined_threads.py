"""DuckDB keeps one database per file per process: two threads opening one file confined (triage's
workers, each investigating a metric of the same warehouse file) must not race between configuring
the database and locking it (the second thread's time zone was refused as "configuration locked")."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb

from investigator.sources.readonly import connect_confined_duckdb


def test_threads_opening_one_file_confined_all_read_it(tmp_path: Path) -> None:
    errors: list[str] = []
    counts: list[int] = []
    for round_ in range(10):  # a fresh file each round: each starts unlocked
        path = tmp_path / f"shop{round_}.ddb"
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE sales AS SELECT range AS x FROM range(5)")
        con.close()

        def read(path: Path = path) -> None:
            try:
                counts.append(
                    int(connect_confined_duckdb(f"duckdb:///{path}").table("sales").count().execute())
                )
            except Exception as e:  # the race's symptom, kept to be asserted on
                errors.append(str(e).splitlines()[0])

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [] and counts == [5] * 40
