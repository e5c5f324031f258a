"""Regression (issue 37, item 8): the warm helper kept serving a dependency that changed on disk
when the change was one the helper key's folder listing could not see (a distribution found by
`importlib.metadata` but not as a `*.dist-info` folder of a path entry, such as an egg on the path,
upgraded in place). The key now covers every distribution `importlib.metadata` finds, by its
metadata file's modification time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from investigator.warm.place import helper_key


def test_a_dependency_upgraded_in_place_where_only_importlib_metadata_sees_it_is_another_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    egg = tmp_path / "somedep-1.0-py3.egg"
    info = egg / "EGG-INFO" / "PKG-INFO"
    info.parent.mkdir(parents=True)
    info.write_text("Metadata-Version: 1.1\nName: somedep\nVersion: 1.0\n")
    os.utime(info, ns=(1_000_000_000, 1_000_000_000))
    monkeypatch.syspath_prepend(str(egg))
    before = helper_key({})
    assert helper_key({}) == before  # nothing changed: the same helper
    info.write_text("Metadata-Version: 1.1\nName: somedep\nVersion: 1.1\n")  # upgraded in place
    os.utime(info, ns=(2_000_000_000, 2_000_000_000))
    os.utime(egg, ns=(1, 1))  # the folder listing sees nothing new
    assert helper_key({}) != before
