"""Executing the chapters without stalls: a fix for a lost wake-up in notebook execution.

**What was seen.** ``make book`` sometimes waited exactly the cell timeout (600 s, later 120 s) on one cell
and then went on as if nothing had happened: no error, the right outputs. It happened only in cells that
show an ``ipywidgets.Output`` (the chapters' sliders and labs), more often on a loaded machine, with
ipykernel 7 and 6 alike; during the wait the kernel and the build were both idle.

**Why.** The build executes notebooks with ``nbclient``. While a cell runs, ``nbclient`` waits for the
kernel's ``execute_reply`` with ``await shell_socket.poll(timeout)`` (a ``zmq.asyncio`` socket) and, in a
second task, reads the IOPub outputs. When an output belongs to an ``Output`` widget, ``nbclient``'s widget
mimic (``nbclient.output_widget.OutputWidget``) sends a ``comm_msg`` back to the kernel **on that same shell
socket**, through ``jupyter_client.session.Session.send``, which writes raw to a blocking shadow of the
socket. ZeroMQ signals a socket's file descriptor edge-triggered: a raw send processes the socket's pending
commands, including the "message arrived" signal of an ``execute_reply`` that landed a moment before, and
the asyncio wrapper never hears of it. Its pending ``poll`` is then not woken; only when its timeout fires
does it look again (``poll(0)``), find the reply and return it, so the cell "succeeds" after exactly the
timeout. The same class of bug on the kernel side (replies sent raw on the shell socket, ipython/ipykernel
issue 1554) is fixed in the ipykernel we pin, 7.4.0 (replies sent through the stream, pull request 1529);
no ipykernel pin can cure this one, which is in the client.
``tests/test_execution.py`` reproduces the lost wake-up deterministically with two sockets.

**The fix.** :func:`install` replaces the widget mimic's sender so that it sends through the asyncio
socket's own ``send_multipart``, which re-arms any pending ``poll`` after sending (the same cure as the
kernel's). It is applied by ``tools/execute.py`` and, as a Sphinx extension listed in ``_config.yml``, inside
``jupyter-book build``. nbval does not use the widget mimic and is not affected.

**The kernels' transport.** Every kernel that executes a chapter (``make book``, ``make execute``, nbval) talks to
its client over TCP on 127.0.0.1. jupyter_client's kernel managers provision CurveZMQ keys only when asked
(``KernelManager.transport_encryption``, default ``"disabled"``), and ipykernel 7 then warns on every start
("Kernel is running over TCP without encryption"), once per executed notebook in the book's log. No tool on the
path (jupyter-book, myst-nb, nbclient, nbval) exposes that setting, so :func:`install` sets the kernel managers'
default policy to ``"auto"``: the manager generates a key pair for each kernel whose kernelspec declares Curve
support (ipykernel's does) and the kernel encrypts its sockets, which is what the warning asks for. Outputs do not
change; ``tests/test_execution.py`` starts a kernel the way the book does and fails if the warning comes back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["install", "installed", "setup"]

_ORIGINAL: dict[str, Any] = {}


def _publish_msg_through_asyncio(
    self,
    msg_type: str,
    data: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    buffers: list[Any] | None = None,
    **keys: Any,
) -> None:
    """``OutputWidget._publish_msg`` that lets the asyncio socket see its own send."""
    import zmq.asyncio
    from nbclient.jsonutil import json_clean

    socket = self.kernel_client.shell_channel.socket
    if not isinstance(socket, zmq.asyncio.Socket):  # a blocking client has no wake-ups to lose
        return _ORIGINAL["_publish_msg"](self, msg_type, data=data, metadata=metadata, buffers=buffers, **keys)
    content = json_clean(dict(data={} if data is None else data, comm_id=self.comm_id, **keys))
    session = self.kernel_client.session
    msg = session.msg(msg_type, content=content, parent=self.parent_header, metadata={} if metadata is None else metadata)
    frames = session.serialize(msg) + list(buffers or [])
    socket.send_multipart(frames)  # returns a finished Future after a non-blocking send, re-arming pending polls


#: The kernel managers' transport-encryption policy while chapters execute (see "The kernels' transport" above).
TRANSPORT_ENCRYPTION = "auto"


def install() -> None:
    """Patch ``nbclient``'s Output-widget mimic and encrypt the kernels' transport (idempotent)."""
    from jupyter_client.manager import KernelManager
    from nbclient.output_widget import OutputWidget

    # One trait object serves KernelManager and its subclasses (AsyncKernelManager, nbclient's and nbval's managers);
    # its default is read whenever a manager is created without an explicit policy.
    KernelManager.class_traits()["transport_encryption"].default_value = TRANSPORT_ENCRYPTION

    if "_publish_msg" not in _ORIGINAL:
        _ORIGINAL["_publish_msg"] = OutputWidget._publish_msg
        OutputWidget._publish_msg = _publish_msg_through_asyncio


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    from nbclient.output_widget import OutputWidget

    return OutputWidget._publish_msg is _publish_msg_through_asyncio


def setup(app) -> dict[str, Any]:
    """Sphinx extension entry point: install the fix before myst-nb executes any notebook."""
    install()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
