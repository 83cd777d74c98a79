# -*- coding: utf-8 -*-
"""kubelet_healthz against a real HTTP server on loopback that plays the kubelet:
one that stays up is healthy; one that answers "ok" and then dies (as the kubelet
does when it refuses its checkpoints after serving healthz) is not, however
often it answered ok."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.modules import kubelet_healthz


class Kubelet(http.server.BaseHTTPRequestHandler):
    up_until = None  # monotonic time after which healthz stops answering ok

    def do_GET(self):  # noqa: N802 (http.server's name)
        ok = self.up_until is None or time.monotonic() < self.up_until
        self.send_response(200 if ok else 500)
        self.end_headers()
        self.wfile.write(b"ok" if ok else b"[-]containermanager failed")

    def log_message(self, *args):
        pass


@pytest.fixture
def kubelet():
    server = http.server.HTTPServer(("127.0.0.1", 0), Kubelet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    Kubelet.up_until = None


def run(capsys, **args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            kubelet_healthz.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def test_a_kubelet_that_stays_up_is_healthy(kubelet, capsys):
    code, result = run(capsys, url="http://127.0.0.1:%d/healthz" % kubelet.server_port, window=6, timeout=20, interval=0.5)
    assert code == 0 and result["healthy"] and result["drops"] == 0 and 6 <= result["waited"] < 9
    assert result["changed"] is False


def test_a_kubelet_that_answers_ok_then_dies_is_not_healthy(kubelet, capsys):
    Kubelet.up_until = time.monotonic() + 2
    code, result = run(capsys, url="http://127.0.0.1:%d/healthz" % kubelet.server_port, window=6, timeout=8, interval=0.5)
    assert code == 1 and not result["healthy"] and result["drops"] == 1
    assert "did not stay ok for 6 s within 8 s" in result["msg"] and "answered and then died 1 time(s)" in result["msg"]
    assert result["last"].startswith("500")


def test_nothing_listening_is_not_healthy(capsys):
    code, result = run(capsys, url="http://127.0.0.1:9/healthz", window=6, timeout=6, interval=1)
    assert code == 1 and "no answer" in result["last"]


@pytest.mark.parametrize("args, message", [({"window": 5}, "proves nothing"), ({"window": 20, "timeout": 10}, "at least window")])
def test_a_window_that_proves_nothing_is_refused(capsys, args, message):
    code, result = run(capsys, **args)
    assert code == 1 and message in result["msg"]
