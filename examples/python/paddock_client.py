"""A client for `paddock serve`, standard library only (asyncio), for agent frameworks.

    async with await PaddockClient.connect("unix:/run/paddock/paddock.sock") as client:
        result = await client.run(["git", "status"], cwd="/work/repo")
        print(result.exit_code, result.stdout)

Many commands share one connection (each is a task); output can be streamed through
on_output; stdin can be given whole or streamed; escalated commands ask on_approval.
The protocol is in paddock's README ("paddock serve").
"""

import asyncio
import base64
import itertools
import json
import os
from dataclasses import dataclass, field


class PaddockError(Exception):
    """The daemon refused or could not run a command (code: E_FORBIDDEN_COMMAND, ...)."""

    def __init__(self, code, message, event=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.event = event or {}


@dataclass
class Result:
    exit_code: int
    signal: int
    stdout: bytes
    stderr: bytes
    event: dict = field(repr=False)  # the whole exit event: decision, rule, violations, ...

    @property
    def timed_out(self):
        return self.event.get("timed_out", False)


def _bytes(event):
    data = event.get("data", "")
    if event.get("encoding") == "base64":
        return base64.b64decode(data)
    return data.encode("utf-8")


class PaddockClient:
    def __init__(self, reader, writer):
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._commands = {}  # id -> asyncio.Queue of events
        self._pump = asyncio.get_running_loop().create_task(self._read_events())
        self.hello = None

    @classmethod
    async def connect(cls, where, token=None, limit=16 * 1024 * 1024):
        """where: "unix:PATH" or "tcp:HOST:PORT"; token: for TCP (or PADDOCK_SERVE_TOKEN)."""
        if where.startswith("unix:"):
            reader, writer = await asyncio.open_unix_connection(where[5:], limit=limit)
        elif where.startswith("tcp:"):
            host, _, port = where[4:].rpartition(":")
            reader, writer = await asyncio.open_connection(host.strip("[]"), int(port), limit=limit)
        else:
            raise ValueError("expected unix:PATH or tcp:HOST:PORT")
        client = cls(reader, writer)
        hello = {"type": "hello", "version": 1}
        token = token or os.environ.get("PADDOCK_SERVE_TOKEN")
        if token:
            hello["token"] = token
        client._hello_queue = asyncio.Queue()
        try:
            await client._send(hello)
        except (ConnectionError, OSError):
            pass  # the reader says why
        client.hello = await client._hello_queue.get()
        if client.hello.get("type") == "error":
            raise PaddockError(client.hello["code"], client.hello["message"], client.hello)
        return client

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass
        self._pump.cancel()

    async def _send(self, message):
        self._writer.write((json.dumps(message) + "\n").encode())
        await self._writer.drain()  # the daemon's backpressure reaches us here

    async def _read_events(self):
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                event = json.loads(line)
                if event.get("type") in ("hello", "error") and "id" not in event and \
                        hasattr(self, "_hello_queue") and self.hello is None:
                    self._hello_queue.put_nowait(event)
                    continue
                queue = self._commands.get(json.dumps(event.get("id")))
                if queue is not None:
                    queue.put_nowait(event)
        except (ConnectionError, OSError):
            pass
        finally:
            if self.hello is None and hasattr(self, "_hello_queue"):
                self._hello_queue.put_nowait({"type": "error", "code": "E_CONFIG_INVALID",
                                              "message": "the daemon closed the connection at "
                                              "once (is this user allowed? --allow-uid)"})
            for queue in self._commands.values():
                queue.put_nowait({"type": "error", "code": "E_SPAWN_FAILED",
                                  "message": "the daemon closed the connection"})

    async def run(self, argv=None, *, shell=None, cwd=None, env=None, timeout=None,
                  max_output_bytes=None, stdin=None, policy=None, on_output=None,
                  on_approval=None, on_started=None):
        """Runs one command; returns a Result, raises PaddockError if it could not run.

        stdin: bytes (given whole), an async iterator of bytes (streamed), or None.
        on_output(stream, data): called per chunk ("stdout"/"stderr", bytes).
        on_approval(event) -> "approve" | "approve_session" | "deny" (may be async).
        """
        command_id = next(self._ids)
        key = json.dumps(command_id)
        queue = self._commands[key] = asyncio.Queue()
        request = {"type": "exec", "id": command_id}
        if shell is not None:
            request["shell"] = shell
        else:
            request["argv"] = list(argv)
        request["cwd"] = cwd if cwd is not None else os.getcwd()
        if env:
            request["env"] = env
        if timeout is not None:
            request["timeout_ms"] = int(timeout * 1000)
        if max_output_bytes is not None:
            request["max_output_bytes"] = max_output_bytes
        if policy:
            request["policy"] = policy
        streaming = stdin is not None and not isinstance(stdin, (bytes, bytearray))
        if isinstance(stdin, (bytes, bytearray)):
            request["stdin"] = base64.b64encode(stdin).decode()
            request["stdin_encoding"] = "base64"
        elif streaming:
            request["stdin"] = "stream"
        await self._send(request)
        feeder = None
        if streaming:
            async def feed():
                async for chunk in stdin:
                    await self._send({"type": "write", "id": command_id,
                                      "data": base64.b64encode(chunk).decode(),
                                      "encoding": "base64"})
                await self._send({"type": "close_stdin", "id": command_id})
            feeder = asyncio.get_running_loop().create_task(feed())
        out, err = bytearray(), bytearray()
        try:
            while True:
                event = await queue.get()
                kind = event["type"]
                if kind in ("stdout", "stderr"):
                    data = _bytes(event)
                    if on_output:
                        on_output(kind, data)
                    else:
                        (out if kind == "stdout" else err).extend(data)
                elif kind == "started":
                    if on_started:
                        on_started(event)
                elif kind == "approval_request":
                    answer = "deny"
                    if on_approval:
                        answer = on_approval(event)
                        if asyncio.iscoroutine(answer):
                            answer = await answer
                    await self._send({"type": answer, "id": command_id})
                elif kind == "exit":
                    return Result(event["exit_code"], event["signal"], bytes(out), bytes(err), event)
                elif kind == "error" and "request" not in event:
                    raise PaddockError(event["code"], event["message"], event)
        except asyncio.CancelledError:
            await self._send({"type": "cancel", "id": command_id})
            raise
        finally:
            if feeder:
                feeder.cancel()
            del self._commands[key]

    async def signal(self, command_id, signal="TERM"):
        await self._send({"type": "signal", "id": command_id, "signal": signal})
