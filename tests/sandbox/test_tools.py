"""Every MCP tool, over a real MCP client session: once to a `python -m sandbox` child over stdio, on
each backend; the rest of the contracts through the in-memory transport to the same server."""

from __future__ import annotations

import base64
import io
import zipfile
from pathlib import Path

import pytest
from mcp import Client

from sandbox.models import ExecResult
from sandbox.policy import Backend

from .conftest import error_text, in_memory, server_params, structured

pytestmark = pytest.mark.anyio


async def test_every_tool_round_trips(backend: Backend, tmp_path: Path) -> None:
    async with Client(server_params(backend)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert names >= {
            "create_session",
            "execute",
            "install_package",
            "upload_file",
            "list_files",
            "download_file",
            "restart",
            "cleanup",
        }

        made = structured(await c.call_tool("create_session", {"memory": "1g"}))
        assert made["backend"] == backend, made
        sid = made["session_id"]

        up = await c.call_tool(
            "upload_file", {"session_id": sid, "name": "in/sales.csv", "text": "day,revenue\n1,10\n2,32\n"}
        )
        assert not up.is_error, up
        inside = structured(up)["path_in_kernel"]

        code = (
            f"import pandas as pd, matplotlib.pyplot as plt\n"
            f"sales = pd.read_csv({inside!r})\n"
            "sales.plot(x='day', y='revenue'); plt.show()\n"
            "sales.to_csv('out.csv', index=False)\n"
            "int(sales.revenue.sum())"
        )
        ran = await c.call_tool("execute", {"session_id": sid, "code": code})
        out = structured(ran)
        assert out["ok"], out
        assert out["result"] == "42"
        figure = next(d for d in out["displays"] if d.startswith("[image saved as"))
        png_name = figure.removeprefix("[image saved as ").removesuffix("]")
        assert "out.csv" in out["files"] and png_name in out["files"]
        assert "iVBOR" not in str(ran.content), "an image was inlined into the tool result"

        listed = structured(await c.call_tool("list_files", {"session_id": sid}))["files"]
        assert {"in/sales.csv", "out.csv", png_name} <= set(listed)
        assert not any(name.startswith(".") for name in listed)

        text = structured(await c.call_tool("download_file", {"session_id": sid, "name": "out.csv"}))
        assert text["text"] == "day,revenue\n1,10\n2,32\n"
        png = structured(await c.call_tool("download_file", {"session_id": sid, "name": png_name}))
        assert base64.b64decode(png["content_base64"]).startswith(b"\x89PNG")

        again = structured(await c.call_tool("restart", {"session_id": sid}))
        assert again["restored"] == ["sales"]
        after = structured(await c.call_tool("execute", {"session_id": sid, "code": "len(sales)"}))
        assert after["result"] == "2"

        refused = await c.call_tool("install_package", {"session_id": sid, "package": "six"})
        assert refused.is_error and "no network" in error_text(refused)

        closed = structured(await c.call_tool("cleanup", {"session_id": sid}))
        assert closed["session_id"] == sid
        gone = await c.call_tool("execute", {"session_id": sid, "code": "1"})
        assert gone.is_error and "no session" in error_text(gone)


async def test_tool_errors_are_results_and_the_server_keeps_serving(backend: Backend) -> None:
    async with in_memory(backend) as c:
        bad = await c.call_tool("execute", {"session_id": "nope", "code": "1"})
        assert bad.is_error and bad.structured_content is None

        sid = structured(await c.call_tool("create_session", {"memory": "1g"}))["session_id"]
        escape = await c.call_tool("upload_file", {"session_id": sid, "name": "../../etc/x", "text": "x"})
        assert escape.is_error and "inside the workspace" in error_text(escape)
        missing = await c.call_tool("download_file", {"session_id": sid, "name": "absent.txt"})
        assert missing.is_error
        nodata = await c.call_tool("create_session", {"data_paths": ["/no/such/file.parquet"]})
        assert nodata.is_error and "does not exist" in error_text(nodata)

        failed = await c.call_tool("execute", {"session_id": sid, "code": "def f():\n    return 1/0\nf()"})
        # hosts and model clients key on isError: the traceback is in the text, the result beside it
        assert failed.is_error and "ZeroDivisionError" in error_text(failed)
        assert "return 1/0" in error_text(failed) and "\x1b[" not in error_text(failed)
        user_error = ExecResult.model_validate(failed.structured_content)
        assert user_error.ok is False and user_error.error is not None
        assert user_error.error.name == "ZeroDivisionError"
        ok = structured(await c.call_tool("execute", {"session_id": sid, "code": "6*7"}))
        assert ok["result"] == "42"
        await c.call_tool("cleanup", {"session_id": sid})


def _wheel(name: str = "tinypkg") -> bytes:
    """A minimal pure-Python wheel, so installing needs no package index."""
    buf = io.BytesIO()
    dist = f"{name}-0.1.dist-info"
    files = {
        f"{name}/__init__.py": "ANSWER = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{p},,\n" for p in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(buf, "w") as z:
        for path, text in {**files, f"{dist}/RECORD": record}.items():
            z.writestr(path, text)
    return buf.getvalue()


async def test_install_package_from_an_uploaded_wheel(backend: Backend) -> None:
    async with in_memory(backend) as c:
        sid = structured(await c.call_tool("create_session", {"memory": "1g"}))["session_id"]
        await c.call_tool(
            "upload_file",
            {
                "session_id": sid,
                "name": "tinypkg-0.1-py3-none-any.whl",
                "content_base64": base64.b64encode(_wheel()).decode(),
            },
        )
        done = await c.call_tool(
            "install_package",
            {
                "session_id": sid,
                "package": "./tinypkg-0.1-py3-none-any.whl",
                "index": False,
            },
        )
        assert not done.is_error, structured(done)
        used = structured(
            await c.call_tool("execute", {"session_id": sid, "code": "import tinypkg; tinypkg.ANSWER"})
        )
        assert used["result"] == "42"
        await c.call_tool("cleanup", {"session_id": sid})


async def test_a_folder_with_foreign_files_is_not_taken_as_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("not the sandbox's")
    async with in_memory("local") as c:
        refused = await c.call_tool("create_session", {"workspace": str(tmp_path)})
        assert refused.is_error and "did not make" in error_text(refused)
        fresh = structured(await c.call_tool("create_session", {"workspace": str(tmp_path / "ws")}))
        await c.call_tool("cleanup", {"session_id": fresh["session_id"]})
        again = structured(await c.call_tool("create_session", {"workspace": str(tmp_path / "ws")}))
        assert again["workspace"] == str(tmp_path / "ws")  # a workspace the sandbox made is reused (resume)
        await c.call_tool("cleanup", {"session_id": again["session_id"]})


async def test_a_huge_structured_result_goes_to_a_file(tmp_path: Path) -> None:
    async with in_memory("local") as c:
        sid = structured(await c.call_tool("create_session", {}))["session_id"]
        ran = structured(
            await c.call_tool("execute", {"session_id": sid, "code": "emit(list(range(100_000)), 'big')"})
        )
        (item,) = ran["data"]
        assert item["result"] is None and item["label"] == "big"
        assert item["saved_as"] in ran["files"]
        await c.call_tool("cleanup", {"session_id": sid})


async def test_a_third_party_client_sees_a_version_and_outputs_that_follow_their_schemas(
    tmp_path: Path,
) -> None:
    """As any MCP client would: the server's version, an output schema per tool, and structured
    results (failed code included) that validate against it."""
    from importlib.metadata import version

    import jsonschema

    async with in_memory("local") as c:
        assert c.server_info is not None and c.server_info.version == version("investigator")
        schemas = {t.name: t.output_schema for t in (await c.list_tools()).tools}
        assert all(schemas.values()), [n for n, s in schemas.items() if not s]
        sid = structured(await c.call_tool("create_session", {}))["session_id"]
        calls = [
            ("execute", {"session_id": sid, "code": "x = 6 * 7\nx"}),
            ("execute", {"session_id": sid, "code": "1/0"}),
            ("upload_file", {"session_id": sid, "name": "a.txt", "text": "hello"}),
            ("list_files", {"session_id": sid}),
            ("cleanup", {"session_id": sid}),
        ]
        for tool, args in calls:
            result = await c.call_tool(tool, args)
            assert result.structured_content is not None, (tool, result)
            jsonschema.validate(result.structured_content, schemas[tool])
