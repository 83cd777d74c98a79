"""The ansible-core versions the collection claims are those it is tested with.

requires_ansible (meta/runtime.yml) and every role's min_ansible_version name the
oldest ansible-core that requirements-dev.txt pins (the Python 3.11 fallback);
tests/sanity has an ignore file for each minor version from there to the newest pin.
"""
import glob
import os
import re

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pinned_minors():
    with open(os.path.join(REPO, "requirements-dev.txt")) as f:
        pins = re.findall(r"^ansible-core==(\d+)\.(\d+)\.\d+", f.read(), re.M)
    return sorted({(int(a), int(b)) for a, b in pins})


def test_requires_ansible_is_the_oldest_tested_core():
    oldest = pinned_minors()[0]
    with open(os.path.join(REPO, "meta", "runtime.yml")) as f:
        requires = yaml.safe_load(f)["requires_ansible"]
    assert requires == ">=%d.%d.0" % oldest


def test_roles_name_the_oldest_tested_core():
    oldest = "%d.%d" % pinned_minors()[0]
    for path in glob.glob(os.path.join(REPO, "roles", "*", "meta", "main.yml")):
        with open(path) as f:
            assert yaml.safe_load(f)["galaxy_info"]["min_ansible_version"] == oldest, path


def test_sanity_ignore_files_cover_the_tested_range():
    minors = pinned_minors()
    want = {"ignore-%d.%d.txt" % (minors[0][0], m) for m in range(minors[0][1], minors[-1][1] + 1)}
    have = {os.path.basename(p) for p in glob.glob(os.path.join(REPO, "tests", "sanity", "ignore-*.txt"))}
    assert have == want
