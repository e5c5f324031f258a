"""Recognition: recall asked with what a run found (its causes' segments and which way they
moved) puts a past memory of the same drop first among many memories of the metric."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from investigator.config import Settings
from investigator.memory.embed import Embedder
from investigator.memory.models import NewMemory, source_key
from investigator.memory.store import MemoryStore
from investigator.request import build_request
from investigator.runner import investigate
from investigator.sources.synth import generate

IOS = {"platform": "ios"}
GENERIC = "revenue moved in the last 7 days against the previous 7; causes looked for in platform, channel"


def past(source: str | None) -> list[tuple[NewMemory, int]]:
    """Twenty memories of revenue on one table, each with its age in days: the iOS drop (old),
    an iOS rise (recent: the same segment the other way), and eighteen others worded much as a
    query with only the metric, window and dimensions is."""
    base = {"type": "observation", "metric": "revenue", "source": source}
    out = [
        (NewMemory(text="revenue: segment_change in platform=ios, 96% of the change (-41,200); ios orders "
                   "halved", run_id="r-ios-drop", kind="segment_change", segment=IOS, direction="down",
                   **base), 70),
        (NewMemory(text="revenue: segment_change in platform=ios, 120% of the change (+18,900); an iOS "
                   "promotion", run_id="r-ios-rise", kind="segment_change", segment=IOS, direction="up",
                   **base), 3),
    ]  # fmt: skip
    others = [("channel", c) for c in ("organic", "paid_search", "social", "email", "affiliate")]
    others += [("platform", p) for p in ("web", "android")]
    for i in range(18):
        dim, value = others[i % len(others)]
        way = ("down", "-") if i % 2 else ("up", "+")
        out.append(
            (NewMemory(text=f"{GENERIC}: segment_change in {dim}={value} ({way[1]}{1000 + 37 * i:,})",
                       run_id=f"r-other-{i}", kind="segment_change", segment={dim: value},
                       direction=way[0], **base), 1 + i % 5)
        )  # fmt: skip
    return out


def fill(store: MemoryStore, memories: list[tuple[NewMemory, int]]) -> None:
    now = datetime.now(UTC)
    for m, age in memories:
        store.add([m], created=now - timedelta(days=age))


def test_among_twenty_memories_of_a_metric_the_same_drop_ranks_first(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    fill(store, past("t"))
    found = store.search(GENERIC, 5, "revenue", ["platform", "channel"], source="t")
    assert "r-ios-drop" not in [m.run_id for m in found]  # the metric and window alone: every memory alike
    from investigator.memory.models import Lead  # not in a store without recognition

    leads = [Lead(kind="segment_change", segment=IOS, direction="down")]
    found = store.search(f"revenue: segment_change in {IOS}", 5, "revenue", ["platform", "channel"],
                         source="t", leads=leads)  # fmt: skip
    assert found[0].run_id == "r-ios-drop" and found[0].direction == "down"
    assert found[0].score is not None and 0 < found[0].score < 1.5  # the reported score is a relevance
    rise = [Lead(kind="segment_change", segment=IOS, direction="up")]
    assert store.search("revenue", 5, "revenue", source="t", leads=rise)[0].run_id == "r-ios-rise"


def test_a_run_that_finds_the_ios_drop_again_says_seen_before_among_twenty_memories(
    tmp_path: Path, msettings: Settings, home: Path, embedder: Embedder
) -> None:
    """The real run: what it found asks recall again, so the old iOS drop comes first in the
    report and is named "Seen before"; the recent iOS rise is not the same drop."""
    frame, _ = generate("segment_change", seed=3, segment=IOS, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    fill(MemoryStore(home, embedder), past(source_key(str(data))))
    report = investigate(
        build_request("revenue", str(data), "7d", None, "previous", None, None, None), msettings
    )
    assert report.root_causes[0].segment == IOS and (report.root_causes[0].change or 0) < 0
    assert report.recalled[0].run_id == "r-ios-drop"
    seen = [n for n in report.notes if n.startswith("Seen before")]
    assert len(seen) == 1 and "r-ios-drop" in seen[0] and "a drop in platform=ios" in seen[0], report.notes
    assert not [n for n in report.notes if "r-ios-rise" in n and "Seen before" in n]


def test_after_compaction_the_second_ios_drop_still_says_seen_before(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    """`memory compact` folds the first run's memories into a summary; the second run on the same
    drop still recognises it (run, kind, segment and direction are kept beside the summary)."""
    from typer.testing import CliRunner

    from investigator.front.cli import app

    frame, _ = generate("segment_change", seed=3, segment=IOS, factor=0.5)
    frame.to_parquet(data := tmp_path / "ios.parquet", index=False)
    request = build_request("revenue", str(data), "7d", None, "previous", None, None, None)
    first = investigate(request, msettings)
    compacted = CliRunner().invoke(app, ["memory", "compact", "--older-than", "0", "--home", str(home)])
    assert compacted.exit_code == 0 and "into 1 chunks" in compacted.output, compacted.output
    second = investigate(request, msettings)
    seen = [n for n in second.notes if n.startswith("Seen before")]
    assert seen and first.run_id in seen[0] and "platform=ios" in seen[0], second.notes
    assert second.recalled[0].run_id == first.run_id and second.recalled[0].segment == IOS


def test_forget_removes_one_run_and_leaves_the_others_in_its_summary(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    fill(store, past("t"))
    summarised, made = store.compact(older_than_days=0)
    assert summarised == 20 and made >= 2
    assert store.forget("r-ios-rise") == 1
    texts = "\n".join(m.text for m in store.all())
    assert "r-ios-rise" not in texts and "r-ios-drop" in texts and "r-other-7" in texts
    assert store.count() >= 2 and all(m.summary for m in store.all())
    from investigator.memory.models import Lead

    drop = [Lead(kind="segment_change", segment=IOS, direction="down")]
    found = store.search("revenue", 5, "revenue", source="t", leads=drop)
    assert found[0].run_id == "r-ios-drop" and found[0].kind == "segment_change"  # still recognised
    rise = [Lead(kind="segment_change", segment=IOS, direction="up")]
    assert "r-ios-rise" not in [
        m.run_id for m in store.search("revenue", 5, "revenue", source="t", leads=rise)
    ]
    assert store.forget("r-ios-rise") == 0  # nothing of it is left
