"""`reset_session`: the same local kernel process, an empty namespace, a new workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.sandbox.conftest import error_text, server_params, structured

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_reset_session_empties_the_namespace_and_moves_the_workspace(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    async with Client(server_params("local")) as c:
        made = structured(await c.call_tool("create_session", {"workspace": str(first)}))
        sid = made["session_id"]
        code = "import os, pandas as pd\nleftover = pd.DataFrame({'a': [1]})\nos.same_process = True"
        assert structured(await c.call_tool("execute", {"session_id": sid, "code": code}))["ok"]
        assert (first / ".state" / "leftover.pkl").exists()

        again = structured(await c.call_tool("reset_session", {"session_id": sid, "workspace": str(second)}))
        assert again["session_id"] == sid and again["workspace"] == str(second.resolve())
        probe = "import os, json\nprint(json.dumps(['leftover' in globals(), os.getcwd(), os.same_process]))"
        seen = structured(await c.call_tool("execute", {"session_id": sid, "code": probe}))["stdout"]
        assert json.loads(seen) == [False, str(second.resolve()), True]  # same process, fresh namespace
        preloaded = structured(
            await c.call_tool("execute", {"session_id": sid, "code": "callable(period_cube)"})
        )
        assert preloaded["result"] == "True"
        await c.call_tool(
            "execute", {"session_id": sid, "code": "import pandas as pd\nfresh = pd.DataFrame({'b': [2]})"}
        )
        assert (second / ".state" / "fresh.pkl").exists() and not (
            second / ".state" / "leftover.pkl"
        ).exists()
        files = structured(await c.call_tool("list_files", {"session_id": sid}))["files"]
        assert not any("leftover" in f for f in files)

        foreign = tmp_path / "someone-elses"
        foreign.mkdir()
        (foreign / "notes.txt").write_text("mine")
        refused = await c.call_tool("reset_session", {"session_id": sid, "workspace": str(foreign)})
        assert "already holds files" in error_text(refused)


async def test_a_reset_skips_ipythons_full_collections_and_leaves_the_collector_as_it_was(
    tmp_path: Path,
) -> None:
    """`%reset` collects garbage twice (0.2 s with pandas and Ibis loaded, before the next run can
    start); the reset skips those, and kernel code still finds `gc.collect` itself afterwards."""
    async with Client(server_params("local")) as c:
        sid = structured(await c.call_tool("create_session", {"workspace": str(tmp_path / "a")}))[
            "session_id"
        ]
        count = (
            "import gc, sys\nsys.full_collections = []\n"
            "gc.callbacks.append(lambda phase, info: phase == 'start' and info['generation'] == 2"
            " and sys.full_collections.append(1))\nkept = [1]"
        )
        assert structured(await c.call_tool("execute", {"session_id": sid, "code": count}))["ok"]
        await c.call_tool("reset_session", {"session_id": sid, "workspace": str(tmp_path / "b")})
        probe = (
            "import gc, sys, json\nn = len(sys.full_collections)\ngc.collect()\n"
            "print(json.dumps([n, len(sys.full_collections), 'kept' in globals()]))"
        )
        seen = structured(await c.call_tool("execute", {"session_id": sid, "code": probe}))["stdout"]
        assert json.loads(seen) == [0, 1, False]  # none during the reset; the real collector after it
