"""The notebook-execution stall (onelayer.execution): its cause reproduced with two sockets, and the fix.

The cause: a raw send on a zmq.asyncio socket whose ``poll`` is pending consumes the edge-triggered
"message arrived" signal, so the poll wakes only at its timeout. These tests make the reply arrive first,
wait (with ``select``, which does not consume the signal) until the socket's file descriptor says so, then
send a widget comm message the way nbclient's Output-widget mimic does, and time the pending poll.
"""

from __future__ import annotations

import asyncio
import select
import time
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session
from nbclient.output_widget import OutputWidget

from onelayer import execution

ROOT = Path(__file__).resolve().parents[1]
POLL_TIMEOUT_S = 1.5


class _Channel:
    def __init__(self, socket, session):
        self.socket, self.session = socket, session

    def send(self, msg):
        self.session.send(self.socket, msg)


class _KernelClient:
    """Just what the Output-widget mimic touches: a session and a shell channel."""

    def __init__(self, socket):
        self.session = Session(key=b"")
        self.shell_channel = _Channel(socket, self.session)


def _time_pending_poll(send) -> tuple[float, int, list[bytes]]:
    """Seconds a pending poll waits when ``send(dealer)`` runs just after a reply has arrived."""

    async def main():
        ctx = zmq.asyncio.Context()
        kernel_socket = ctx.socket(zmq.ROUTER)
        kernel = zmq.Socket.shadow(kernel_socket.underlying)  # the kernel's side, used blocking
        port = kernel.bind_to_random_port("tcp://127.0.0.1")
        client = ctx.socket(zmq.DEALER)
        client.setsockopt(zmq.IDENTITY, b"client")
        client.connect(f"tcp://127.0.0.1:{port}")
        try:
            await client.send(b"execute_request")
            assert kernel.poll(5000), "the request did not arrive"
            kernel.recv_multipart()
            pending = asyncio.ensure_future(client.poll(int(POLL_TIMEOUT_S * 1000)))
            await asyncio.sleep(0.05)  # the poll is now registered with the event loop
            kernel.send_multipart([b"client", b"execute_reply"])
            # Block the event loop until the reply's signal is on the descriptor (select does not consume it).
            readable, _, _ = select.select([client.getsockopt(zmq.FD)], [], [], 5.0)
            assert readable, "the reply did not arrive"
            send(client)
            start = time.monotonic()
            events = await pending
            waited = time.monotonic() - start
            assert kernel.poll(5000), "the comm message did not reach the kernel"
            received = kernel.recv_multipart()
            return waited, events, received
        finally:
            client.close(linger=0)
            kernel_socket.close(linger=0)
            ctx.term()

    return asyncio.run(main())


def _mimic(client) -> OutputWidget:
    widget = OutputWidget("comm-1", {"outputs": []}, _KernelClient(client), executor=object())
    widget.parent_header = {}
    return widget


def test_a_raw_send_loses_the_wake_up_of_a_pending_poll():
    """The cause: the raw send (as Session.send does) hides the arrived reply until the poll times out."""
    waited, events, _ = _time_pending_poll(lambda c: zmq.Socket.shadow(c.underlying).send(b"comm_msg"))
    assert events == zmq.POLLIN  # the reply was there all along ...
    assert waited >= 0.9 * POLL_TIMEOUT_S  # ... but the poll only saw it at its timeout


def test_a_send_through_the_asyncio_socket_keeps_the_wake_up():
    waited, events, _ = _time_pending_poll(lambda c: c.send(b"comm_msg"))
    assert events == zmq.POLLIN and waited < 0.5 * POLL_TIMEOUT_S


def test_nbclient_output_widget_mimic_stalls_without_the_fix_and_not_with_it(monkeypatch):
    execution.install()
    monkeypatch.setattr(OutputWidget, "_publish_msg", execution._ORIGINAL["_publish_msg"])
    assert not execution.installed()
    waited, _, _ = _time_pending_poll(lambda c: _mimic(c).sync_state())
    assert waited >= 0.9 * POLL_TIMEOUT_S, "nbclient no longer loses the wake-up: the fix may be dropped"

    monkeypatch.undo()
    execution.install()
    assert execution.installed()
    waited, events, received = _time_pending_poll(lambda c: _mimic(c).sync_state())
    assert events == zmq.POLLIN and waited < 0.5 * POLL_TIMEOUT_S
    session = Session(key=b"")
    _, frames = session.feed_identities(received)
    msg = session.deserialize(frames)
    assert msg["msg_type"] == "comm_msg"
    assert msg["content"] == {"data": {"method": "update", "state": {"outputs": []}, "buffer_paths": []}, "comm_id": "comm-1"}


def test_install_is_idempotent_and_keeps_the_original():
    execution.install()
    execution.install()
    assert execution.installed()
    assert execution._ORIGINAL["_publish_msg"] is not execution._publish_msg_through_asyncio


def test_the_fix_is_applied_wherever_chapters_are_executed_with_nbclient():
    config = (ROOT / "_config.yml").read_text()
    assert "- onelayer.execution" in config  # jupyter-book build (myst-nb -> nbclient)
    assert "execution.install()" in (ROOT / "tools" / "execute.py").read_text()  # make execute


@pytest.mark.parametrize("path", ["_config.yml", "tools/execute.py", "Makefile"])
def test_cell_timeouts_fail_fast(path):
    """A future stall fails within about 4x the slowest cell (~30 s) instead of costing 10 minutes."""
    import re

    text = (ROOT / path).read_text()
    values = [int(v) for v in re.findall(r"(?:timeout[:=]\s*|cell-timeout=)(\d+)", text)]
    assert values and all(v <= 120 for v in values), values
