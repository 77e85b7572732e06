"""Parts' answers posted to the calling process (graphops.engine.mailbox): what a post carries,
what the mailbox drops, and a cluster call's answers by post and by Dask alike."""
from __future__ import annotations

import dataclasses
import pickle
import socket
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphops as go
from graphops.engine import mailbox as mb
from graphops.io.generate import rmat

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the mailbox is Linux's abstract sockets")

_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
_answers = st.recursive(_leaves,
                        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                                     max_size=5), max_leaves=30)


def _raw(box: mb.Mailbox, data: bytes) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(box.address)
        sock.sendall(data)


@settings(max_examples=60, deadline=None)
@given(key=st.integers(0, 10**6), answer=_answers)
def test_a_posted_answer_arrives_as_it_was_sent(key, answer):
    with mb.mailbox() as box:
        assert box.post().send(key, answer)
        got = box.wait(5.0)
        assert got == [(key, answer)] and box.posted == 1 and box.take() == []


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=200), tail=_answers)
def test_what_does_not_start_with_the_calls_token_is_dropped(data, tail):
    """Anything else that connects (another process, a stale call's worker) is never read as a post."""
    with mb.mailbox() as box:
        _raw(box, data)
        _raw(box, bytes(16) + pickle.dumps((1, tail)))  # a post with another token
        if not data.startswith(box.token):
            assert box.wait(1.0) == [] and box.posted == 0


def test_answers_that_cannot_be_posted_are_not(monkeypatch):
    """Too large, another machine, not picklable, the call over: the worker's send says False, and
    the answer goes to Dask as it always does."""
    box = mb.mailbox()
    post = box.post()
    assert not post.send(0, np.zeros(post.most // 8 + 1))  # larger than the limit
    assert not dataclasses.replace(post, machine="elsewhere/boot").send(0, 1)
    assert not post.send(0, lambda: 1)  # not picklable by pickle
    assert box.wait(0.2) == []
    assert post.send(0, np.zeros(post.most // 16))
    assert box.wait(5.0)[0][0] == 0
    box.close()
    assert not post.send(1, 1)  # nobody listens
    box.knock()  # after the close: nothing happens
    monkeypatch.setattr(mb, "POST_MOST", 0)
    assert mb.mailbox() is None


def test_a_post_larger_than_the_limit_is_dropped_unread():
    with mb.mailbox() as box:
        _raw(box, box.token + pickle.dumps((0, b"x" * (mb.POST_MOST + 10))))
        assert box.wait(1.0) == []


def test_a_knock_wakes_the_wait():
    with mb.mailbox() as box:
        threading.Timer(0.05, box.knock).start()
        t0 = time.perf_counter()
        assert box.wait(30.0) == []
        assert time.perf_counter() - t0 < 10.0


def test_jaccard_answers_come_by_post_or_through_dask_alike(client, monkeypatch):
    """On a CPU cluster on this machine every part's answer is posted, and with posts turned off
    or too small a limit every one comes through Dask: the same values each way."""
    g = rmat(9, 8, seed=3)
    ref = go.run("jaccard", g, backend="cpu")
    out = go.execute_call("jaccard", g, backend="cpu", client=client)
    assert out.details["posted_parts"] == out.details["parts"] > 1, out.details
    pd.testing.assert_frame_equal(out.result, ref)
    for most in (0, 64):
        monkeypatch.setattr(mb, "POST_MOST", most)
        out = go.execute_call("jaccard", g, backend="cpu", client=client)
        assert out.details["posted_parts"] == 0 and out.details["parts"] > 1
        pd.testing.assert_frame_equal(out.result, ref)


def _answer(post, key, size):  # a task that posts its answer when it can, as a part does
    answer = (key, "v" * size)
    if post is not None:
        post.send(key, answer)
    return answer


def test_some_answers_by_post_and_some_through_dask(client):
    """The engine's wait: answers within the limit posted, the others fetched from Dask once their
    futures are done, each given to its own future once; a failed task raises its own error."""
    from distributed import Event

    from graphops.engine import cluster
    from graphops.base.work import _Bar

    sizes = [10, 2 * mb.POST_MOST, 100, 3 * mb.POST_MOST, 1, 0]
    with mb.mailbox() as box:
        futures = {client.submit(_answer, box.post(), k, n, pure=False): k for k, n in enumerate(sizes)}
        got = {}
        posted = cluster._wait(client, list(futures), Event("never-set", client=client), _Bar(False, "", 6),
                               lambda fut, value: got.setdefault(futures[fut], value), box,
                               {k: fut for fut, k in futures.items()})
    assert posted == 4 and got == {k: (k, "v" * n) for k, n in enumerate(sizes)}
    with mb.mailbox() as box:
        futures = {client.submit(_answer, box.post(), k, n, pure=False): k for k, n in enumerate([1, -1, 2])}
        futures[client.submit(_fails, pure=False)] = 3
        with pytest.raises(ValueError, match="part 3 fails"):
            cluster._wait(client, list(futures), Event("never-set", client=client), _Bar(False, "", 4),
                          lambda fut, value: None, box, {k: fut for fut, k in futures.items()})


def _fails():
    raise ValueError("part 3 fails")


def test_a_connection_from_another_user_is_closed_unread(monkeypatch):
    """The abstract namespace has no file permissions: the peer's user is checked first."""
    import os

    with mb.mailbox() as box:
        post = box.post()
        uid = os.getuid()
        monkeypatch.setattr(mb.os, "getuid", lambda: uid + 1)
        assert post.send(0, 1)  # sent, and dropped there
        assert box.wait(1.0) == []
        monkeypatch.undo()
        assert post.send(1, 2) and box.wait(5.0) == [(1, 2)]


def test_a_worker_does_not_pickle_an_answer_it_could_not_post(monkeypatch):
    """A large value is measured, not pickled (a copy of it, or of a GPU value to the host, for nothing)."""
    pickled = []
    real = pickle.dumps
    monkeypatch.setattr(mb.pickle, "dumps", lambda obj, **kw: pickled.append(obj) or real(obj, **kw))
    with mb.mailbox() as box:
        post = box.post()
        assert not post.send(0, (np.zeros(post.most), 1.0, "tcp://w", {}, (0.0, 1.0)))
        assert pickled == []
        assert post.send(1, (np.zeros(4), 1.0, "tcp://w", {}, (0.0, 1.0))) and len(pickled) == 1


class _NoAccept:
    """A listening socket whose accept fails as with no file descriptor left."""

    def __init__(self, sock):
        self.sock = sock

    def fileno(self):
        return self.sock.fileno()

    def accept(self):
        import errno

        raise OSError(errno.EMFILE, "Too many open files")

    def close(self):
        self.sock.close()


def test_a_mailbox_that_cannot_accept_leaves_the_answers_to_dask():
    """An accept that fails (not 'nothing to accept') stops the posts, without an error and
    without waking the wait again and again; knocks still wake it."""
    with mb.mailbox() as box:
        box._listen = _NoAccept(box._listen)
        assert box.post().send(0, 1)  # connected and written: pending on the listening socket
        assert box.wait(0.0) == [] and box._broken
        t0 = time.perf_counter()
        assert box.wait(0.3) == []  # waits out its timeout: the pending connection no longer wakes it
        assert time.perf_counter() - t0 >= 0.25
        threading.Timer(0.05, box.knock).start()
        assert box.wait(30.0) == []


def _sleeps(seconds):
    time.sleep(seconds)
    return seconds


def test_a_landing_array_stays_busy_until_dask_reports_the_calls_tasks_done(client):
    """Answers posted before Dask has the tasks done: a part run again after its worker died could
    still write into the caller's array, so the next call may not take it until Dask says so."""
    import functools
    import tempfile

    from graphops.engine import cluster, landing
    from tests.clusters import FileStaging

    with tempfile.TemporaryDirectory() as tmp:
        for cancel in (False, True):
            staging = FileStaging(f"{tmp}/s", 8)
            fut = client.submit(_sleeps, 0.5 if not cancel else 60, pure=False)
            landing.done(staging, 1, client, 0, unconfirmed=1)
            cluster._once_done([fut], functools.partial(landing.confirmed, staging))
            assert staging.busy and staging.confirming
            if cancel:
                fut.cancel()
            for _ in range(600):
                if not staging.busy:
                    break
                time.sleep(0.05)
            assert not staging.busy and not staging.confirming
        landing.done(staging, 1, client, 0, unconfirmed=0)  # every task done by Dask already: free at once
        assert not staging.busy
