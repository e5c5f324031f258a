"""`--filter` read and checked against the data: the segment form, the SQL form and its refusals."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from investigator.analysis.reading import open_table
from investigator.analysis.spec import RowFilter
from investigator.errors import DataError, UserError
from investigator.request import build_request, segment_text
from investigator.sources.filters import check_rows, parse_filter


@pytest.fixture
def table(tmp_path: Path):  # type: ignore[no-untyped-def]
    frame = pd.DataFrame(
        {
            "date": [date(2026, 3, d) for d in (1, 1, 2, 2, 3)],
            "region": ["EU", "US", "EU", "US", None],
            "amount": [10.0, 20.0, 30.0, 40.0, 50.0],
            "n": [1, 2, 3, 4, 5],
        }
    )
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, index=False)
    return open_table(path, "date")


def kept(table, text: str) -> float:  # type: ignore[no-untyped-def]
    where = parse_filter(text, table)
    return float(open_table_filtered(table, where).amount.sum().to_pyarrow().as_py() or 0)


def open_table_filtered(table, where: RowFilter):  # type: ignore[no-untyped-def]
    from investigator.analysis.reading import filtered

    return filtered(table, where)


def test_a_segment_keeps_its_rows_compared_as_text(table) -> None:  # type: ignore[no-untyped-def]
    assert parse_filter("region=EU", table).segment == [("region", "EU")]
    assert kept(table, "region=EU") == 40.0
    assert kept(table, "region = US & n=4") == 40.0  # & and , join pairs; all must hold
    assert kept(table, "region=US,n=2") == 20.0  # an integer column compared as text


def test_a_sql_condition_keeps_its_rows_and_is_stored_re_rendered(table) -> None:  # type: ignore[no-untyped-def]
    where = parse_filter("amount > 15 and region in ('EU','US')", table)
    assert where.segment == [] and where.sql == "amount > 15 AND region IN ('EU', 'US')"
    assert kept(table, "amount > 15 and region in ('EU','US')") == 90.0
    assert kept(table, "region IS NULL OR date >= '2026-03-02'") == 120.0
    assert kept(table, "lower(region) LIKE 'e%' AND NOT n BETWEEN 2 AND 3") == 10.0


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("1=1; drop table x", "holds 2 statements"),
        ("region IN (SELECT name FROM secrets)", "subquery"),
        ("EXISTS (SELECT 1 FROM users)", "subquery"),
        ("drop table x", "DROP statement"),
        ("set_config('default_transaction_read_only', 'off', false) = 'x'", "set_config()"),
        ("getenv('HOME') = 'x'", "getenv()"),
        ("other.region = 'EU'", "not a column of this table"),
        ("region = 1 AND n > 0", "does not type-check"),
        ("amount", "not true or false"),
    ],
)
def test_anything_but_a_read_only_condition_is_refused(table, text: str, said: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match="--filter must be a segment") as e:
        parse_filter(text, table)
    assert said in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("text", ["regoin=EU", "regoin = 'EU'"])
def test_a_misspelt_column_gets_a_did_you_mean(table, text: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match=r"column 'regoin', which the data lacks.*did you mean 'region'\?"):
        parse_filter(text, table)


def test_a_filter_keeping_no_row_says_what_the_column_holds(table) -> None:  # type: ignore[no-untyped-def]
    where = parse_filter("region=eu", table)
    with pytest.raises(DataError, match=r"matches no rows; region holds EU, US: did you mean region=EU\?"):
        check_rows(table, open_table_filtered(table, where), where, "date")


def test_build_request_takes_a_segment_for_triage() -> None:
    request = build_request(
        "revenue", None, "7d", None, "previous", None, None, None, filter={"region": "EU"}
    )
    assert request.filter == "region=EU"
    assert segment_text({"city": "Paris, TX"}) == "CAST(\"city\" AS VARCHAR) = 'Paris, TX'"
    assert (
        build_request("revenue", None, "7d", None, "previous", None, None, None, filter="  ").filter is None
    )
