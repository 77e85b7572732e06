"""Parts' short answers posted straight to the calling process by workers on the same machine.

A part's answer (its value, seconds, worker and phases) reaches the caller through Dask in
several steps: the worker tells the scheduler the task finished, the scheduler tells the client
its key is in memory, then the client asks the scheduler for the value, which asks the worker for
it. On 4 H200s (2026-11-28) that was 7-11 ms of jaccard's 90 ms call on R-MAT 22 after the last
part ended (its values land in the caller's GPU memory: :mod:`graphops.engine.landing`, so each
answer is a few hundred bytes). Here the caller listens on a socket of its own for the call, and
a worker on the same machine sends the part's answer there as the part ends, when it pickles to
at most :data:`POST_MOST` bytes: the call has it without waiting for Dask's messages. Every task
still returns its answer to Dask, so anything not posted (a larger value, a worker on another
machine, any error on the way) comes as before, and failures, cancellations and lost workers are
Dask's as before.

The socket is a Unix stream socket in Linux's abstract namespace (no file is made; elsewhere
there is no mailbox and answers come through Dask), named at random per call. A connection from a
process of another user is closed unread (the abstract namespace has no file permissions), and a
post must start with a token of 16 random bytes that only the call's tasks were given (compared
in constant time, after all 16 bytes are read); anything else is dropped unread.
"""
from __future__ import annotations

import hmac
import os
import pickle
import select
import socket
import struct
import sys
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from graphops.engine.landing import _machine

__all__ = ["Post", "Mailbox", "mailbox", "POST_MOST"]

# The largest answer (pickled, bytes) a part posts; larger ones come as Dask results. 0: none posted.
POST_MOST = 64 * 1024
_TOKEN = 16


@dataclass(frozen=True)
class Post:
    """Where a part posts its answer: the caller's socket name, machine and the call's token."""

    address: bytes
    machine: str
    token: bytes
    most: int

    def send(self, key: Any, answer: Any) -> bool:
        """On a worker: ``(key, answer)`` sent to the caller; False where it was not (another
        machine, too large, not picklable, the caller gone or not listening)."""
        if self.machine != _machine() or _size(answer) > self.most:  # too large: not even pickled here
            return False
        try:
            body = pickle.dumps((key, answer), protocol=5)
        except Exception:  # not picklable as such: Dask's own serializers carry it
            return False
        if len(body) > self.most:
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect(self.address)
                sock.sendall(self.token + body)
        except OSError:
            return False
        return True


def _size(obj: Any) -> int:
    """About how many bytes ``obj`` pickles to (its arrays' bytes), without pickling it."""
    from graphops.engine.placing import nbytes

    if isinstance(obj, (tuple, list)):
        return sum(_size(item) for item in obj)
    try:
        return nbytes(obj)
    except Exception:  # no estimate: the pickle's length decides
        return 0


class Mailbox:
    """A call's socket for its parts' posts (:class:`Post`), and a wake-up that any thread of
    this process may ring (:meth:`knock`, e.g. a Dask future's done callback)."""

    def __init__(self) -> None:
        self.token = os.urandom(_TOKEN)
        self.most = POST_MOST  # the call's limit, for its posts and their reading alike
        self.address = b"\0graphops-" + uuid.uuid4().hex.encode()
        self._listen = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listen.bind(self.address)
            self._listen.listen(1024)
            self._listen.setblocking(False)
            self._wake, self._ring = socket.socketpair()
            self._wake.setblocking(False)
            self._ring.setblocking(False)
        except BaseException:
            self._listen.close()
            raise
        self.posted = 0
        self._lock = threading.Lock()  # knock (any thread) against close
        self._closed = False
        self._broken = False  # accept failed (e.g. out of file descriptors): answers come through Dask

    def post(self) -> Post:
        return Post(self.address, _machine(), self.token, self.most)

    def knock(self, *_: Any) -> None:
        """Wake :meth:`wait` (from any thread; nothing happens once the mailbox is closed)."""
        with self._lock:
            if self._closed:
                return
            try:
                self._ring.send(b"k")
            except OSError:  # wake-ups already pending
                pass

    def wait(self, timeout: float) -> list[tuple[Any, Any]]:
        """The ``(key, answer)`` posts that came, after waiting up to ``timeout`` seconds for a post
        or a knock (none: at once)."""
        ready, _, _ = select.select([self._wake] if self._broken else [self._listen, self._wake], [], [], timeout)
        if self._wake in ready:
            try:
                while self._wake.recv(4096):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
        return self.take()

    def take(self) -> list[tuple[Any, Any]]:
        """The posts that came, without waiting."""
        got: list[tuple[Any, Any]] = []
        while not self._broken:
            try:
                conn, _ = self._listen.accept()
            except (BlockingIOError, InterruptedError):
                return got
            except OSError:  # e.g. no file descriptor left: the rest of the call's answers come through Dask
                self._broken = True
                return got
            with conn:
                item = self._read(conn) if _same_user(conn) else None
            if item is not None:
                got.append(item)
                self.posted += 1
        return got

    def _read(self, conn: socket.socket) -> tuple[Any, Any] | None:
        conn.settimeout(1.0)  # the sender wrote before connecting was done: this waits only on a stalled one
        data = b""
        try:
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
                if len(data) > self.most + _TOKEN:
                    return None  # not one of this call's posts
        except OSError:
            return None
        if not hmac.compare_digest(data[:_TOKEN], self.token):
            return None
        try:
            key, answer = pickle.loads(data[_TOKEN:])
        except Exception:  # a class this process cannot load: the answer comes through Dask
            return None
        return key, answer

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for sock in (self._listen, self._wake, self._ring):
                sock.close()

    def __enter__(self) -> "Mailbox":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def _same_user(conn: socket.socket) -> bool:
    """Whether the process at the other end runs as this process's user."""
    try:
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    except (OSError, AttributeError):
        return False
    return uid == os.getuid()


def mailbox() -> Mailbox | None:
    """A new call's mailbox, or ``None`` where there is none (not Linux, posts turned off by
    :data:`POST_MOST` = 0, or no socket to be had)."""
    if not sys.platform.startswith("linux") or POST_MOST <= 0:
        return None
    try:
        return Mailbox()
    except OSError:
        return None
