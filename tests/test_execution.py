"""The notebook-execution stall (onelayer.execution): its cause reproduced with two sockets, and the fix.

The cause: a raw send on a zmq.asyncio socket whose ``poll`` is pending consumes the edge-triggered
"message arrived" signal, so the poll wakes only at its timeout. These tests make the reply arrive first,
wait (with ``select``, which does not consume the signal) until the socket's file descriptor says so, then
send a widget comm message the way nbclient's Output-widget mimic does, and see whether the pending poll
wakes up. No clock is read: the poll's own timeout is far longer than any run of these tests, and a woken poll is
one that finished within a fixed number of turns of the event loop, which a slow or busy machine does not change.
"""

from __future__ import annotations

import asyncio
import select
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session
from nbclient.output_widget import OutputWidget

from onelayer import execution

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
#: The pending poll's timeout: never reached in a passing run (a poll that has not woken is cancelled instead).
POLL_TIMEOUT_S = 600
#: Turns of the event loop a woken poll may take to finish (it takes one or two).
LOOP_TURNS = 50


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


def _pending_poll_wakes(send) -> tuple[bool, list[bytes]]:
    """Whether a pending poll wakes up when ``send(dealer)`` runs just after a reply has arrived."""

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
            pending = asyncio.ensure_future(client.poll(POLL_TIMEOUT_S * 1000))
            await asyncio.sleep(0.05)  # the poll is now registered with the event loop
            assert not pending.done(), "the poll returned before the reply was sent"
            kernel.send_multipart([b"client", b"execute_reply"])
            # Block the event loop until the reply's signal is on the descriptor (select does not consume it).
            readable, _, _ = select.select([client.getsockopt(zmq.FD)], [], [], 5.0)
            assert readable, "the reply did not arrive"
            send(client)
            for _ in range(LOOP_TURNS):
                if pending.done():
                    break
                await asyncio.sleep(0)
            woken = pending.done()
            if woken:
                assert pending.result() == zmq.POLLIN
            else:
                pending.cancel()
                assert zmq.Socket.shadow(client.underlying).poll(0) == zmq.POLLIN  # the reply was there all along
            assert kernel.poll(5000), "the comm message did not reach the kernel"
            received = kernel.recv_multipart()
            return woken, received
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
    woken, _ = _pending_poll_wakes(lambda c: zmq.Socket.shadow(c.underlying).send(b"comm_msg"))
    assert not woken  # the reply was there all along, but the poll would see it only at its timeout


def test_a_send_through_the_asyncio_socket_keeps_the_wake_up():
    woken, _ = _pending_poll_wakes(lambda c: c.send(b"comm_msg"))
    assert woken


def test_nbclient_output_widget_mimic_stalls_without_the_fix_and_not_with_it(monkeypatch):
    execution.install()
    monkeypatch.setattr(OutputWidget, "_publish_msg", execution._ORIGINAL["_publish_msg"])
    assert not execution.installed()
    woken, _ = _pending_poll_wakes(lambda c: _mimic(c).sync_state())
    assert not woken, "nbclient no longer loses the wake-up: the fix may be dropped"

    monkeypatch.undo()
    execution.install()
    assert execution.installed()
    woken, received = _pending_poll_wakes(lambda c: _mimic(c).sync_state())
    assert woken
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


#: The slowest cell of the book takes about 15 s on the 2-core CI machine and about twice that on a slower CPU;
#: a loaded machine can double it again. The cell timeout is only a stall guard, several times above that.
CELL_TIMEOUT_S = 300


@pytest.mark.parametrize("path", ["_config.yml", "tools/execute.py", "Makefile"])
def test_cell_timeouts_are_one_stall_guard(path):
    """Every executor of the chapters uses the same cell timeout: a stall guard, not a speed limit."""
    import re

    text = (ROOT / path).read_text()
    values = [int(v) for v in re.findall(r"(?:timeout[:=]\s*|cell-timeout=)(\d+)", text)]
    assert values and all(v == CELL_TIMEOUT_S for v in values), values


KERNEL_WARNING = "without encryption"


def _run_tiny_notebook() -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT_S).execute()
    assert nb.cells[0].outputs[0]["text"] == "42\n"


def test_kernels_start_without_the_transport_warning(capfd, monkeypatch):
    """A kernel started as the book starts its kernels logs no warning a reader should ignore (its stderr is ours)."""
    from jupyter_client.manager import KernelManager

    trait = KernelManager.class_traits()["transport_encryption"]
    monkeypatch.setattr(trait, "default_value", "disabled")  # jupyter_client's own default: the cause
    _run_tiny_notebook()
    assert KERNEL_WARNING in capfd.readouterr().err  # ipykernel still warns there, so the check below can fail

    monkeypatch.undo()
    execution.install()
    assert trait.default_value == execution.TRANSPORT_ENCRYPTION == "auto"
    _run_tiny_notebook()
    assert KERNEL_WARNING not in capfd.readouterr().err
