"""An approved late-data fact applies only where its claim can hold: windows that reach the data's
last `lag` days, the part of a drop those days could hold, and its own segment."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pandas as pd

from investigator.config import Settings
from investigator.report.model import Report
from investigator.request import build_request
from investigator.runner import investigate
from investigator.sources.synth import generate

from .conftest import write_ledger

WHOLE = "- [late_data lag=2d metrics=revenue] revenue data lands about 2 days late"


def run(data: Path, settings: Settings, end: date | None = None) -> Report:
    request = build_request("revenue", str(data), "7d", end, "previous", None, None, None)
    return investigate(request, settings)


def test_a_no_segment_fact_leaves_a_drop_in_one_segment_its_real_cause(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    write_ledger(home, "revenue", [WHOLE])
    report = run(data, msettings)
    assert [f.kind for f in report.facts] == ["late_data"]  # loaded, and still not applied
    assert report.root_causes[0].kind == "segment_change"
    assert report.root_causes[0].segment == {"platform": "ios"}
    assert "incomplete recent data" not in report.conclusion
    dq = next(h for h in report.hypotheses if h.id == "H1")  # data quality
    assert dq.status != "CONFIRMED"


def test_a_drop_six_weeks_before_the_data_ends_keeps_its_real_cause(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    """The data goes on for six weeks of ordinary days after the drop: the fact is about those
    last days, not the drop's window, even with the fact in the drop's own segment."""
    end = date(2026, 2, 15)
    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5, end=end)
    day = pd.to_datetime(frame["date"])
    later = frame[
        (day > pd.Timestamp(end - timedelta(days=49))) & (day <= pd.Timestamp(end - timedelta(days=7)))
    ]
    later = later.assign(date=pd.to_datetime(later["date"]) + pd.Timedelta(days=49))
    frame = frame.assign(date=day)
    pd.concat([frame, later]).to_parquet(data := tmp_path / "old.parquet", index=False)
    write_ledger(home, "revenue", [WHOLE, "- [late_data platform=ios lag=7d] ios lands 7 days late"])
    report = run(data, msettings, end=end)
    assert report.root_causes[0].kind == "segment_change"
    assert report.root_causes[0].segment == {"platform": "ios"}
    assert "incomplete recent data" not in report.conclusion
    assert "approved fact" not in report.root_causes[0].evidence


def test_a_fact_in_its_segment_relabels_the_cause_the_table_and_the_headline(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    write_ledger(home, "revenue", ["- [late_data platform=ios lag=4d] ios lands 4 days late"])
    report = run(data, msettings)
    top = report.root_causes[0]
    assert (top.kind, top.detail, top.segment) == (
        "data_quality",
        "incomplete_recent_data",
        {"platform": "ios"},
    )
    assert top.verified is True  # the host checked the drop's numbers
    assert "incomplete recent data in platform=ios" in report.conclusion
    dq = next(h for h in report.hypotheses if h.id == "H1")  # data quality
    assert dq.status == "CONFIRMED" and "approved fact" in dq.evidence
    assert report.status == "concluded"


def test_a_drop_larger_than_the_late_days_can_hold_keeps_its_cause(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    """ios halved over the whole week: two late days could take at most 2/7 of its week."""
    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    write_ledger(home, "revenue", ["- [late_data platform=ios lag=2d] ios lands 2 days late"])
    report = run(data, msettings)
    top = report.root_causes[0]
    assert (top.kind, top.segment) == ("segment_change", {"platform": "ios"})
    assert "may be rows landing late" in top.evidence
    assert "incomplete recent data" not in report.conclusion


def test_runs_store_what_they_found_not_the_facts_they_were_given(
    tmp_path: Path, msettings: Settings, home: Path, embedder: object
) -> None:
    """Two runs with a 30-fact ledger: the store holds their findings and no copy of a fact."""
    from investigator.memory.store import MemoryStore

    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    write_ledger(
        home, "revenue", [f"- [note metrics=revenue] fact number {i} about revenue" for i in range(30)]
    )
    first, second = run(data, msettings), run(data, msettings)
    assert len(first.facts) == 30
    stored = MemoryStore(home, embedder).all()  # type: ignore[arg-type]
    assert {m.run_id for m in stored} == {first.run_id, second.run_id}
    assert not [m for m in stored if m.type == "fact" or "fact number" in m.text]
    assert len(stored) <= 2 * 4  # a conclusion and a few causes per run


def test_another_table_with_the_same_metric_and_dimensions_recalls_nothing_of_the_first(
    tmp_path: Path, msettings: Settings, home: Path, embedder: object
) -> None:
    from investigator.memory.models import NewMemory
    from investigator.memory.store import MemoryStore

    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(first_table := tmp_path / "a.parquet", index=False)
    frame.to_parquet(other_table := tmp_path / "b.parquet", index=False)
    first = run(first_table, msettings)
    assert first.recalled == []
    again = run(first_table, msettings)
    assert {r.run_id for r in again.recalled} == {first.run_id}  # the same data recalls its past
    other = run(other_table, msettings)
    assert other.recalled == [] and not [n for n in other.notes if "Seen before" in n]
    # the user says the two are the same data: memories stored under the alias are shared
    store = MemoryStore(home, embedder)  # type: ignore[arg-type]
    store.add([NewMemory(type="observation", text="revenue fell 40% in platform=ios", run_id="r-alias",
                         metric="revenue", kind="segment_change", segment={"platform": "ios"},
                         source="elsewhere", source_alias="sales")])  # fmt: skip
    found = store.search("revenue fell in platform=ios", 5, "revenue", source=str(other_table), alias="sales")
    assert [m.run_id for m in found] == ["r-alias"]
    assert store.search("revenue fell in platform=ios", 5, "revenue", source=str(other_table)) == []


def test_the_html_and_markdown_reports_list_the_same_facts_and_memories(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    import html as htmllib
    import re

    from investigator.report.html import fragment
    from investigator.report.model import to_markdown

    frame, _ = generate("segment_change", seed=3, segment={"platform": "ios"}, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    write_ledger(home, "revenue", ["- [note metrics=revenue] refunds are excluded before 2025"])
    run(data, msettings)
    report = run(data, msettings)
    assert report.facts and report.recalled
    page = htmllib.unescape(re.sub(r"<[^>]+>", "", fragment(report)))
    markdown = to_markdown(report)
    for f in report.facts:
        assert f.id in page and f.text in page and f.text in markdown
    from investigator.report.recalled import previously_found

    for a in previously_found(report.recalled):
        line = f"({a.when()}; relevance {a.score:.2f})"
        assert line in page and line in markdown
    for heading in ("Approved facts used", "Previously found (recalled, tested against this data)"):
        assert heading in page and heading in markdown
