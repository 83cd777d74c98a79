# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print one closing line with the counts of a pytest junit XML file.

``make test`` ends with this line, ``unit: N passed, N failed, N skipped``,
so that its output closes with the pytest counts whatever ran after pytest:
every file given summed (tests/unit and tests/integration), each file's own
counts after it.
Errors (failed fixtures, collection errors) count as failed. Exits 1 when the
file is missing or holds no test, or when anything failed.

Usage: ``python scripts/junit_summary.py .build/junit-unit.xml [.build/junit-integration.xml ...]``
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def counts(path):
    """Return (passed, failed, skipped) summed over the file's test suites."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return total - failed - skipped, failed, skipped


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: junit_summary.py JUNIT_XML [JUNIT_XML ...]")
    passed = failed = skipped = 0
    parts = []
    for path in sys.argv[1:]:
        try:
            p, f, s = counts(path)
        except (OSError, ET.ParseError) as e:
            raise SystemExit("cannot read the test results %s: %s" % (path, e))
        passed, failed, skipped = passed + p, failed + f, skipped + s
        parts.append("%s %d" % (path.rsplit("junit-", 1)[-1].rsplit(".", 1)[0], p + f + s))
    per_file = " (%s)" % ", ".join(parts) if len(parts) > 1 else ""
    print("unit: %d passed, %d failed, %d skipped%s" % (passed, failed, skipped, per_file))
    sys.exit(1 if failed or not passed + failed else 0)


if __name__ == "__main__":
    main()
