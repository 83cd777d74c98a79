# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When is the kubelet healthy? Its healthz must stay ok for a window.

The kubelet serves /healthz (127.0.0.1:10248, ::1 on IPv6 nodes) before it
validates its CPU/Memory Manager checkpoints (kubelet server.go starts the
healthz server; containerManager.Start runs later and makes the kubelet exit
on a refused checkpoint), and RKE2 restarts a kubelet that exits every 5 s.
So one "200 ok" proves nothing: healthy means ok at every poll for a window
longer than that restart cycle. Waits are by wall-clock time.
"""

from __future__ import annotations

import time

RKE2_RESTART_SECONDS = 5  # RKE2's kubelet supervisor waits this long between starts


def wait_healthy(probe, window, timeout, interval=0.5, clock=time.monotonic, sleep=time.sleep):
    """Poll ``probe()`` -> (ok, what) until it has been ok without a break for ``window``
    seconds (healthy) or ``timeout`` seconds have passed since the start (not healthy).

    Returns {healthy, ok_for (the last unbroken ok run, s), waited (s), polls,
    drops (ok -> not ok transitions: a kubelet that answered, then died), last}.
    """
    start = clock()
    ok_since = None
    result = {"healthy": False, "ok_for": 0.0, "polls": 0, "drops": 0, "last": None}
    while True:
        ok, result["last"] = probe()
        now = clock()  # when the answer came
        result["polls"] += 1
        if ok:
            ok_since = now if ok_since is None else ok_since
            result["ok_for"] = now - ok_since
            if result["ok_for"] >= window:
                result["healthy"] = True
                break
        else:
            if ok_since is not None:
                result["drops"] += 1
            ok_since = None
            result["ok_for"] = 0.0
        if now - start >= timeout:
            break
        sleep(min(interval, start + timeout - now))
    result["waited"] = round(clock() - start, 1)
    result["ok_for"] = round(result["ok_for"], 1)
    return result
