"""An MCP client transport over two pipes that are already open: a sandbox server started earlier
by another process (the warm helper, `investigator.warm`) and handed over at fork, its kernel
already warm.

The wire format is MCP's stdio one (one JSON-RPC message per line), as in `mcp.client.stdio`; only
the spawning differs. Closing our end of the server's stdin is how the session ends: the server
exits on end of input, and the process that started it reaps it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

__all__ = ["pipe_transport"]

_CHUNK = 65536


@asynccontextmanager
async def pipe_transport(
    read_fd: int, write_fd: int
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """Streams of MCP messages read from `read_fd` (the server's stdout) and written to `write_fd`
    (its stdin). Both descriptors are owned from here on and closed on exit."""
    incoming_w, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_r = anyio.create_memory_object_stream[SessionMessage](0)

    reader_done = anyio.Event()

    async def reader() -> None:
        try:
            await read_lines()
        finally:
            reader_done.set()

    async def read_lines() -> None:
        buffer = b""
        async with incoming_w:
            while True:
                try:
                    chunk = await anyio.to_thread.run_sync(os.read, read_fd, _CHUNK, abandon_on_cancel=True)
                except OSError:
                    return
                if not chunk:
                    return
                *lines, buffer = (buffer + chunk).split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        message: SessionMessage | Exception = SessionMessage(
                            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                        )
                    except ValueError as exc:
                        message = exc
                    try:
                        await incoming_w.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return

    async def writer() -> None:
        async with outgoing_r:
            async for item in outgoing_r:
                data = (item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
                try:
                    await anyio.to_thread.run_sync(_write_all, write_fd, data)
                except OSError:
                    await incoming_w.aclose()
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield incoming, outgoing
        finally:
            with anyio.CancelScope(shield=True):
                await outgoing.aclose()
                with suppress(OSError):
                    os.close(write_fd)  # end of input: the server exits, and its stdout with it
                await incoming.aclose()
                with anyio.move_on_after(5):
                    await reader_done.wait()  # the server's stdout ends when it exits
            tg.cancel_scope.cancel()
    if reader_done.is_set():  # else a thread may still be reading it: leave it to process exit
        with suppress(OSError):
            os.close(read_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
