# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report in a real browser: playbooks/plan.yml over the bundled samples (inventory/sample.yml) writes
index.html; headless Chromium (Debian's chromium and chromium-driver, installed by `make deps`) loads it from
file:// with no console error, its DOM shows per host the NUMA node boxes and CPU cells per state that the plans
(the <host>.json files of the same run) say, the filter box works, and each host's map is kept as a PNG in
.build/report-png/<host>.png. One browser session for all of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import OPEN_HOSTS, render_html
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.path.join(REPO, ".build")
PNG_DIR = os.path.join(BUILD, "report-png")
CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
SAMPLES = sorted(gen_sysfs.samples())

# Outside CI a machine without Chromium skips; in CI (`make test` installs it) its absence fails.
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER) and not os.environ.get("CI"),
                                reason="no chromium / chromedriver (Debian packages chromium, chromium-driver: make deps)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """plan.yml over the sample hosts: (report folder, {host: plan})."""
    gen_sysfs.main(["--out", os.path.join(BUILD, "samples")])
    plans = tmp_path_factory.mktemp("plans")
    out = os.path.join(BUILD, "report")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=BUILD, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", os.path.join(REPO, "inventory", "sample.yml"),
           os.path.join(REPO, "playbooks", "plan.yml"), "-e", "rke2_numa_hosts=rke2_numa_samples",
           "-e", "rke2_numa_plan_dir=%s" % plans, "-e", "rke2_numa_report_dir=%s" % out]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out, dict((name, json.loads((plans / (name + ".json")).read_text())) for name in SAMPLES)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver  # pylint: disable=import-outside-toplevel
    from selenium.webdriver.chrome.service import Service  # pylint: disable=import-outside-toplevel

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # headless, as root, and quiet on a machine without network (no background connections at all)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1280,1000", "--user-data-dir=%s" % tmp_path_factory.mktemp("chromium")):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def load(driver, path):
    """Open a file and return its console errors (the browser log's SEVERE entries)."""
    driver.get_log("browser")  # drop what an earlier page left
    driver.get("file://" + path)
    driver.execute_script("return document.readyState")
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def count(driver, selector):
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def test_the_console_check_sees_a_broken_page(browser, tmp_path):
    """The check below can fail: a page whose script throws has a console error."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><script>document.getElementById('filter').value = 1;</script></body></html>")
    errors = load(browser, str(page))
    assert errors and "TypeError" in errors[0], errors


def test_the_report_renders_each_plan_without_console_errors(report, browser):
    folder, plans = report
    assert load(browser, os.path.join(folder, "index.html")) == []
    assert count(browser, "#fleet tbody tr") == len(SAMPLES)
    os.makedirs(PNG_DIR, exist_ok=True)
    for host, plan in plans.items():
        scope = 'details.host[data-host="%s"]' % host
        tables = plan["numa_tables"]
        assert count(browser, scope + " .numa-node") == len(tables), host
        assert count(browser, scope + " .numa-node.memory-only") == sum(1 for t in tables if not t["cpus"]), host
        for t in tables:
            node = '%s .numa-node[data-node="%d"]' % (scope, t["node"])
            for state in ("reserved", "isolated"):
                assert count(browser, node + " rect.cpu." + state) == len(parse_cpulist(t[state + "_cpus"])), (host, t["node"], state)
            assert count(browser, node + " rect.cpu") == len(parse_cpulist(t["cpus"])), (host, t["node"])
        assert count(browser, scope + " rect.cpu.offline") == len(parse_cpulist(plan["offline_cpus"])), host
        assert count(browser, scope + " rect.cpu.online") == 0, host
        element = browser.find_element("css selector", scope)
        browser.execute_script("arguments[0].open = true; arguments[0].scrollIntoView()", element)
        png = os.path.join(PNG_DIR, host + ".png")
        element.screenshot(png)
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    browser.find_element("css selector", "#fleet").screenshot(os.path.join(PNG_DIR, "fleet.png"))


def test_the_filter_box_hides_the_other_hosts(report, browser):
    folder, dummy = report
    assert load(browser, os.path.join(folder, "index.html")) == []
    box = browser.find_element("css selector", "#filter")
    box.send_keys("dgx")
    visible = browser.execute_script(
        "return Array.from(document.querySelectorAll('#fleet tbody tr, details.host')).filter(e => !e.hidden)"
        ".map(e => e.getAttribute('data-host'))")
    assert visible == ["dgx-h100", "dgx-h100"]
    assert browser.find_element("css selector", "#shown").text == "1 of %d hosts" % len(SAMPLES)
    box.clear()
    box.send_keys(" ")  # a blank filter shows every host again
    assert browser.find_element("css selector", "#shown").text == "%d of %d hosts" % (len(SAMPLES), len(SAMPLES))
    assert load(browser, os.path.join(folder, "index.html")) == []


def test_a_shared_map_is_copied_in_when_its_host_is_opened(report, browser, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait  # pylint: disable=import-outside-toplevel

    dummy, plans = report
    plan = plans["dgx-h100"]
    topology = read_topology(os.path.join(BUILD, "samples", "dgx-h100"))
    page = tmp_path / "fleet.html"
    page.write_text(render_html([{"host": "dgx-%02d" % i, "topology": topology, "plan": plan} for i in range(OPEN_HOSTS + 2)]))
    assert load(browser, str(page)) == []
    assert count(browser, "details.host[open]") == 0 and count(browser, ".numa-node") == len(plan["numa_tables"])
    browser.find_element("css selector", "#host-5 > summary").click()
    # the toggle event comes after the click, as a task of its own
    WebDriverWait(browser, 10).until(lambda driver: count(driver, "#host-5 .numa-node") == len(plan["numa_tables"]))
    assert count(browser, "#host-5 rect.cpu.reserved") == len(parse_cpulist(plan["reserved_cpus"]))
    assert count(browser, "#host-5 rect.cpu.isolated") == len(parse_cpulist(plan["isolated_cpus"]))
    assert browser.get_log("browser") == []
