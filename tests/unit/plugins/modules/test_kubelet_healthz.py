# -*- coding: utf-8 -*-
"""kubelet_healthz against a real HTTP server on loopback that plays the kubelet:
one that stays up is healthy; one that answers "ok" and then dies (as the kubelet
does when it refuses its checkpoints after serving healthz) is not, however
often it answered ok.

Every poll is a real HTTP request; the clock is not: the module's waits go
through a fake clock that each sleep moves on (module_utils/healthz.py takes
clock and sleep for this), and the server plays the kubelet on the same clock.
So the test takes milliseconds, not the windows' 20 s, and no machine load can
move a poll past a deadline."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import healthz
from ansible_collections.maitred.rke2_numa.plugins.modules import kubelet_healthz
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module


class FakeClock:
    """Seconds that pass only when someone sleeps."""

    def __init__(self):
        self.now = 1000.0
        self.slept = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


CLOCK = FakeClock()


class Kubelet(http.server.BaseHTTPRequestHandler):
    up_until = None  # time on CLOCK after which healthz stops answering ok

    def do_GET(self):  # noqa: N802 (http.server's name)
        ok = self.up_until is None or CLOCK.clock() < self.up_until
        self.send_response(200 if ok else 500)
        self.end_headers()
        self.wfile.write(b"ok" if ok else b"[-]containermanager failed")

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def fake_clock(monkeypatch):
    """The module's wait_healthy on CLOCK (a fresh one per test)."""
    CLOCK.__init__()
    monkeypatch.setattr(kubelet_healthz, "wait_healthy",
                        functools.partial(healthz.wait_healthy, clock=CLOCK.clock, sleep=CLOCK.sleep))
    return CLOCK


@pytest.fixture
def kubelet():
    server = http.server.HTTPServer(("127.0.0.1", 0), Kubelet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    Kubelet.up_until = None


def run(capsys, **args):
    return run_module(kubelet_healthz, capsys, args)


def test_a_kubelet_that_stays_up_is_healthy(kubelet, capsys, fake_clock):
    code, result = run(capsys, url="http://127.0.0.1:%d/healthz" % kubelet.server_port, window=6, timeout=20, interval=0.5)
    assert code == 0 and result["healthy"] and result["drops"] == 0 and result["waited"] == 6
    # ok at the first poll, then every 0.5 s until 6 s: 13 real requests
    assert result["polls"] == 13 and fake_clock.slept == [0.5] * 12
    assert result["changed"] is False


def test_a_kubelet_that_answers_ok_then_dies_is_not_healthy(kubelet, capsys, fake_clock):
    Kubelet.up_until = fake_clock.now + 2
    code, result = run(capsys, url="http://127.0.0.1:%d/healthz" % kubelet.server_port, window=6, timeout=8, interval=0.5)
    assert code == 1 and not result["healthy"] and result["drops"] == 1
    assert "did not stay ok for 6 s within 8 s" in result["msg"] and "answered and then died 1 time(s)" in result["msg"]
    assert result["last"].startswith("500") and result["waited"] == 8


def test_a_kubelet_that_comes_up_late_is_healthy_once_the_window_has_passed(kubelet, capsys, fake_clock):
    """Down for 3 s (the agent starting), then ok: healthy 6 s after the first ok, not before."""
    class Late(Kubelet):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if CLOCK.clock() < start + 3:
                self.send_response(503)
                self.end_headers()
                return
            super().do_GET()

    start = fake_clock.now
    kubelet.RequestHandlerClass = Late
    code, result = run(capsys, url="http://127.0.0.1:%d/healthz" % kubelet.server_port, window=6, timeout=20, interval=0.5)
    assert code == 0 and result["healthy"] and result["drops"] == 0 and result["waited"] == 9


def test_nothing_listening_is_not_healthy(capsys, fake_clock):
    code, result = run(capsys, url="http://127.0.0.1:9/healthz", window=6, timeout=6, interval=1)
    assert code == 1 and "no answer" in result["last"] and result["polls"] == 7 and fake_clock.slept == [1] * 6


@pytest.mark.parametrize("args, message", [({"window": 5}, "proves nothing"), ({"window": 20, "timeout": 10}, "at least window")])
def test_a_window_that_proves_nothing_is_refused(capsys, args, message):
    code, result = run(capsys, **args)
    assert code == 1 and message in result["msg"]
