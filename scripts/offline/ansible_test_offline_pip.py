# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Let ``ansible-test sanity`` bootstrap pip without its own download host.

ansible-test creates one virtual environment per sanity test with
``python -m venv --without-pip`` and then runs a ``get-pip.py`` script that it
downloads from its own CI file host and caches as
``~/.ansible/test/cache/get_pip_<X_Y>.py``. Machines that reach only the
package index (as ours do) cannot fetch it, and every sanity test then fails
with "does not have pip available".

This script writes a small stand-in into that cache path, unless a real one
is already there. The stand-in does what get-pip.py does for ansible-test:
it puts pip into the empty environment (with the interpreter's own
``ensurepip``) and then ``pip install``\\s the exact packages ansible-test asked
for (``pip==<X.Y>``) from the package index. The pip version is read from the
installed ansible-test, so this follows ansible-core upgrades.

Usage: ``python scripts/offline/ansible_test_offline_pip.py`` with the Python of the
environment that holds ansible-core.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys

MARK = "written by maitred.rke2_numa scripts/ansible_test_offline_pip.py"  # its first path: stubs already cached stay recognised
STAND_IN = '''# -*- coding: utf-8 -*-
"""Stand-in for get-pip.py, %s."""
import subprocess
import sys

# get-pip.py options that pip install does not know: ansible-test passes them
# so that only pip itself is installed, which is all this stand-in installs.
ARGS = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"], stdout=subprocess.DEVNULL)
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--quiet"] + ARGS))
''' % MARK


def pip_version():
    """Return the pip version that the installed ansible-test bootstraps."""
    spec = importlib.util.find_spec("ansible_test")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("ansible-test is not installed for %s" % sys.executable)
    path = os.path.join(list(spec.submodule_search_locations)[0], "_internal", "python_requirements.py")
    with open(path, encoding="utf-8") as handle:
        match = re.search(r"""\bpip=['"]([0-9.]+)['"]""", handle.read())
    if not match:
        raise SystemExit("cannot find the bootstrap pip version in %s" % path)
    return match.group(1)


def main():
    version = pip_version()
    cache = os.path.expanduser(os.path.join("~", ".ansible", "test", "cache"))
    path = os.path.join(cache, "get_pip_%s.py" % version.replace(".", "_"))
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
        # A real get-pip script (fetched elsewhere) or our current stand-in: keep it.
        if current == STAND_IN or MARK not in current:
            return
    os.makedirs(cache, exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(STAND_IN)
    os.replace(path + ".tmp", path)
    print("wrote an offline pip %s bootstrap for ansible-test: %s" % (version, path))


if __name__ == "__main__":
    main()
