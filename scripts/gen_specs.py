# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes what the roles' argument specs declare into the files that repeat it (make specs):

- roles/<role>/defaults/main.yml: every option of the role's spec that has a ``default``;
- the "## Variables" section of roles/<role>/README.md and the tables of docs/VARIABLES.md;
- plugins/doc_fragments/config_modes.py: rke2_config's mode and kubelet_config, their choices and defaults the variables';
- plugins/doc_fragments/playbook_inputs.py: playbook_inputs' inputs, one per variable it reads, described by its spec;
- plugins/doc_fragments/kubectl_verbs.py: the kubectl module's verb option - its choices, and for each verb the ways it
  names its objects, its options, the API requests it sends and whether it writes - from plugins/plugin_utils/kubectl.py
  VERBS (the one table of them);
- plugins/doc_fragments/plan_options.py: the planner's options (numa_plan's documentation) from the plan role's
  variables, their names without the ``rke2_numa_`` prefix, and roles/plan/tasks/numa_plan.yml, the plan role's call
  of the planner with each of them.

A variable is declared once, in meta/argument_specs.yml (its description, type, choices and default; its bounds as the
description's sentence "From MIN to MAX." or "At most MAX."); a ``# ---- Title`` comment line among a spec's options
starts a group (a table of its own in the docs).
tests/unit/test_generated.py fails when a file here is not what this script writes.

    python scripts/gen_specs.py          (make specs)
    python scripts/gen_specs.py --check  (exit 1 and name the stale files)
"""

import os
import re
import sys
import textwrap

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, ".build"))

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubectl, kubelet_rules, specs  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import INPUTS  # noqa: E402  pylint: disable=wrong-import-position

# The order the docs list the roles in: the shared variables, then the apply chain's order.
ROLE_ORDER = ("common", "topology", "plan", "boot_params", "hugepages", "rke2_config", "kubelet_reset", "verify", "drain",
              "labels", "prove")
GENERATED = "generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs)"
TABLE_START = "<!-- variables: %s; edit the spec, not this table -->" % GENERATED
TABLE_END = "<!-- end of the generated variables -->"
PREFIX = specs.PREFIX


class _Dumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
    """Lists indented under their key, as yamllint and ansible-lint want them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def path(*parts):
    return os.path.join(REPO, *parts)


def read(*parts):
    with open(path(*parts), encoding="utf-8") as f:
        return f.read()


def groups(role):
    return specs.groups(role)


def plain(text):
    """Ansible's markup as plain text (a YAML comment)."""
    text = re.sub(r"\b[COVMIUP]\(([^()]*)\)", r"\1", text)
    return re.sub(r"\bL\(([^,()]*),\s*([^()]*)\)", r"\1 (\2)", text)


def markdown(text):
    """Ansible's markup as Markdown, on one line of a table cell."""
    text = re.sub(r"\b[COVMP]\(([^()]*)\)", r"`\1`", text)
    text = re.sub(r"\bI\(([^()]*)\)", r"*\1*", text)
    text = re.sub(r"\bU\(([^()]*)\)", r"<\1>", text)
    text = re.sub(r"\bL\(([^,()]*),\s*([^()]*)\)", r"[\1](\2)", text)
    return " ".join(text.split()).replace("|", "\\|")


def description(spec):
    text = spec.get("description") or ""
    return " ".join(text) if isinstance(text, list) else str(text)


def value_text(value):
    """A default as YAML writes it on one line."""
    if value is None:
        return "null"
    if value == "":
        return '""'
    if isinstance(value, str) and "\n" not in value:
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=10 ** 6).strip().removesuffix("\n...").removesuffix("...").strip()


def default_cell(spec):
    if spec.get("required"):
        return "(required)"
    if "default" not in spec:
        return "(not set)"
    return "`%s`" % value_text(spec["default"]).replace("|", "\\|")


def meaning(spec, entry=""):
    parts = [markdown(description(spec))]
    if spec.get("choices"):
        parts.append("Choices: %s." % ", ".join("`%s`" % c for c in spec["choices"]))
    return " ".join(p for p in parts if p)


def table(role, names, spec_of, header=("Variable", "Default", "Description")):
    rows = ["| %s |" % " | ".join(header), "|---|---|---|"]
    for name in names:
        spec = spec_of(name)
        rows.append("| `%s` | %s | %s |" % (name, default_cell(spec), meaning(spec)))
    return rows


def role_spec_of(role):
    options = specs.role_options(role)
    return lambda name: options[name]


def role_readme_section(role):
    lines = [TABLE_START, ""]
    for title, names in groups(role):
        if title:
            lines += ["### %s" % title, ""]
        lines += table(role, names, role_spec_of(role)) + [""]
    return "\n".join(lines + [TABLE_END])


def replace_between(text, start, end, body, where):
    if start not in text or end not in text:
        raise SystemExit("%s: no generated block (%s ... %s)" % (where, start, end))
    return text[:text.index(start)] + body + text[text.index(end) + len(end):]


def role_readme(role):
    text = read("roles", role, "README.md")
    return replace_between(text, TABLE_START, TABLE_END, role_readme_section(role), "roles/%s/README.md" % role)


def variables_doc():
    text = read("docs", "VARIABLES.md")
    lines = [TABLE_START, ""]
    for role in ROLE_ORDER:
        lines += ["## maitred.rke2_numa.%s" % role, ""]
        for title, names in groups(role):
            # each variable once: in its owner's table (a role that reads another's result declares it too)
            names = [n for n in names if specs.owner(n) == role]
            if not names:
                continue
            if title:
                lines += ["### %s" % title, ""]
            lines += table(role, names, role_spec_of(role), ("variable", "default", "meaning")) + [""]
    return replace_between(text, TABLE_START, TABLE_END, "\n".join(lines + [TABLE_END]), "docs/VARIABLES.md")


def defaults(role):
    lines = ["---", "# The role's defaults, %s: do not edit here." % GENERATED,
             "# Each variable - its description, type, choices, default and bounds - is declared once, in",
             "# roles/%s/meta/argument_specs.yml." % role]
    options = specs.role_options(role)
    for title, names in groups(role):
        names = [n for n in names if "default" in options[n]]
        if not names:
            continue
        lines.append("")
        if title:
            lines.append("# ---- %s" % title)
        for name in names:
            first = plain(description(options[name]))
            lines += textwrap.wrap(first, 116, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)
            lines.append(yaml.dump({name: options[name]["default"]}, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                                   width=10 ** 6).rstrip("\n"))
    return "\n".join(lines) + "\n"


def fragment_text(text):
    """A description for numa_plan's options: the plan role's variables named as the planner's options."""
    return re.sub(r"\bO\(" + PREFIX + r"(\w+)", r"O(\1", text)


def fragment_file(comments, sections):
    """A doc fragment plugin: ``comments`` (lines), ``sections`` [(attribute, YAML text)]."""
    lines = ["# -*- coding: utf-8 -*-", "# Copyright: (c) 2026, maitred.rke2_numa contributors",
             "# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)"]
    lines += ["# " + c for c in comments] + ["", "from __future__ import annotations", "", "", "class ModuleDocFragment(object):"]
    for index, (attribute, text) in enumerate(sections):
        lines += ([""] if index else []) + ['    %s = r"""' % attribute] + text.rstrip("\n").split("\n") + ['"""']
    return "\n".join(lines) + "\n"


class _Flow(dict):
    """A mapping written on one line."""


class _FlowList(list):
    """A list written on one line."""


class _FragmentDumper(_Dumper):  # pylint: disable=too-many-ancestors
    """A doc fragment's YAML: what fits on one line in flow style (_Flow, _FlowList)."""


_FragmentDumper.add_representer(_Flow, lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True))
_FragmentDumper.add_representer(_FlowList, lambda dumper, data: dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True))
LINE = 160  # the house's longest line (pep8 in sanity)
FRAGMENT_LINE = 150  # the width prose is wrapped at first


def _compact(key, value, indent):
    """The value of ``key`` (at ``indent``) as a fragment writes it: a description of one paragraph as a string; a list
    or mapping of scalars (not a description's paragraphs) in flow style when it fits on the key's line."""
    if key == "description" and isinstance(value, list):
        return value[0] if len(value) == 1 else value
    if isinstance(value, dict):
        value = dict((k, _compact(k, v, indent + 2)) for k, v in value.items())
    if not isinstance(value, (dict, list)) or any(isinstance(v, (dict, list)) for v in (value.values() if isinstance(value, dict) else value)):
        return value
    flow = (_Flow if isinstance(value, dict) else _FlowList)(value)
    text = yaml.dump(flow, Dumper=_FragmentDumper, sort_keys=False, width=10 ** 6).strip()
    return flow if indent + len(key) + 2 + len(text) <= LINE else value


def options_yaml(options):
    """The fragment's options: prose wrapped as wide as keeps every line within LINE (yaml wraps at the first space past
    its width, so a long word goes past it)."""
    options = dict((name, _compact(name, entry, 2)) for name, entry in options.items())
    for width in range(FRAGMENT_LINE, 0, -5):
        text = yaml.dump({"options": options}, Dumper=_FragmentDumper, default_flow_style=False, sort_keys=False, width=width)
        if max(len(line) for line in text.splitlines()) <= LINE:
            return text
    raise SystemExit("a word of a fragment is longer than %d characters" % LINE)


def plan_fragment():
    options = {}
    for name, spec in specs.planner_options().items():
        texts = spec["description"] if isinstance(spec["description"], list) else [spec["description"]]
        entry = {"description": [fragment_text(d) for d in texts]}
        entry.update((key, spec[key]) for key in ("type", "elements", "choices", "default") if key in spec)
        options[name] = entry
    return fragment_file(["The planner's options (maitred.rke2_numa.numa_plan): the plan role's variables of its group",
                          '"%s", without their prefix - %s:' % (specs.PLANNER_GROUP, GENERATED),
                          "do not edit here; roles/plan/meta/argument_specs.yml declares them."],
                         [("DOCUMENTATION", options_yaml(options))])


def plan_task(standalone=False):
    """roles/plan/tasks/numa_plan.yml: the numa_plan call with every planner option from its variable
    (options_from_vars: null or undefined leaves the option out - numa_plan's NULL_IS_DEFAULT -, so the planner's own
    default applies; anything else is passed as given).

    ``standalone``: playbooks/tasks/numa_plan.yml, plan.yml's call without the plan role (importing the role runs its
    dependency's validation, the common role's, as a task per host; plan.yml checks those variables once for every host):
    an undefined variable is the planner's default, which is the role's (both generated from its specs)."""
    lines = ["---", "# %s: do not edit here." % GENERATED.capitalize(),
             "# Every planner option from its variable (options_from_vars: roles/plan/meta/argument_specs.yml, group",
             "# \"%s\", rke2_numa_<option>); null or undefined leaves the option out (the planner's" % specs.PLANNER_GROUP,
             "# default), anything else is passed as given - 0, {} and [] mean what they say (reserved_cores 0 is refused).",
             "# It sets the host's facts rke2_numa_topology and rke2_numa_plan (refusing an extra-var plan made for another",
             "# topology): one task per host."]
    if standalone:
        lines += ["# plan.yml's call, without the plan role (whose dependency's validation would be a task per host): an",
                  "# undefined variable is the planner's default, which is the plan role's."]
    if standalone:   # plan.yml: the read (topology_info, the one module call) and the plan in one task per host
        lines += ["# The host's topology_info runs first, in the same task (read), and the plan is for the RKE2 it finds unless",
                  "# rke2_numa_kubernetes_version says; the result is not the plan (the fact is): an event per host, which AWX keeps.",
                  "- name: Read the host's NUMA topology and plan it, in one task", "  maitred.rke2_numa.numa_plan:",
                  "    read:", "      sysfs_root: \"{{ rke2_numa_sysfs_root }}\""]
    else:
        lines += ["- name: Plan the kernel and kubelet settings", "  maitred.rke2_numa.numa_plan:",
                  "    topology: \"{{ rke2_numa_topology }}\"",
                  "    # the RKE2 the host runs (topology_info): the plan is for its kubelet's minor unless rke2_numa_kubernetes_version says",
                  "    rke2_runtime: \"{{ __rke2_numa_topology_info.rke2_runtime | default(omit) }}\""]
    lines += ["    export: true", "    options_from_vars: true"]
    if standalone:
        lines += ["    warn: false   # plan.yml shows them under each host's plan",
                  "    refused_fails: false   # plan.yml names a refused host in its summary and fails at its end",
                  "    return_plan: false   # the fact holds it"]
    lines += ["  register: __rke2_numa_plan_result"]
    return "\n".join(lines) + "\n"


def check_task():
    """playbooks/tasks/node_check.yml (check.yml's one task per host): node_check with every planner option from its
    variable. Not the plan role's: importing a role runs its dependency's validation (the common role's) as a task per
    host; check.yml checks those variables once for every host (playbook_inputs roles). Undefined or null leaves an
    option out: the planner's default, which is the plan role's (both generated from its argument specs)."""
    lines = ["---", "# %s: do not edit here." % GENERATED.capitalize(),
             "# check.yml's one task per host: the node read (node_state_info, the one module call), then on the controller the",
             "# plan (plan_from_vars: every planner option from its variable, roles/plan/meta/argument_specs.yml group",
             "# \"%s\"; undefined or null: the planner's default, which is the plan role's) and the" % specs.PLANNER_GROUP,
             "# decision; it sets the host's facts (rke2_numa_plan, rke2_numa_topology, rke2_numa_compliance, ...).",
             "# The read's options and what the decision reads beside the node come from their variables too (read_from_vars,",
             "# check_from_vars: plugins/plugin_utils/node_inputs.py); a caller that reads otherwise sets __rke2_numa_check (its",
             "# keys win, a null too). A node whose root's files could not be read is kept in __rke2_numa_state (access.denied),",
             "# one that cannot be planned or judged too (refused): the caller says \"not checked\" and why, and fails the run at",
             "# its end.",
             "- name: Read the node, plan it and decide whether it runs its plan", "  maitred.rke2_numa.node_check:",
             "    read_from_vars: true",
             "    check: \"{{ __rke2_numa_check | default({}) }}\"", "    check_from_vars: true"]
    lines += ["    plan_from_vars: true", "    denied_fails: false", "    refused_fails: false",
              "    return_read: false   # the facts hold what the plays and reports need: an event a host, not the node's files"]
    lines += ["  register: __rke2_numa_state"]
    return "\n".join(lines) + "\n"


# playbook_inputs' one input that is not a variable of the collection
HOST_NAME_INPUT = {"description": ["The host's inventory name, given when it names report or plan files (C(<dir>/<host>.json)) - letters, "
                                   "digits, C(-), C(_), C(.) and C(@), no C(/) or leading C(.), and not C(fleet) (the fleet's own file)."],
                   "type": "raw"}


def playbook_inputs_fragment():
    """playbook_inputs' inputs option: one suboption per variable it reads (plugin_utils/playbook_inputs.py INPUTS), with
    the variable's own description (its spec's; another variable named as code, not as an option of this module)."""
    suboptions = {}
    for name in INPUTS:
        if name == "inventory_hostname":
            suboptions[name] = HOST_NAME_INPUT
            continue
        texts = specs.option(name)["description"]
        texts = texts if isinstance(texts, list) else [texts]
        suboptions[name] = {"description": [re.sub(r"\bO\((" + PREFIX + r"\w+)\)", r"C(\1)", t) for t in texts], "type": "raw"}
    option = {"inputs": {"description": ["The playbook's variables set for this host, by name (pass C(omit) for one that is not set) - "
                                         "each checked against its rule and its argument spec's bounds and choices."],
                         "type": "dict", "default": {}, "suboptions": suboptions}}
    return fragment_file(["playbook_inputs' inputs: the variables plugins/plugin_utils/playbook_inputs.py INPUTS names, each described",
                          "as its argument spec describes it - %s:" % GENERATED, "do not edit here."],
                         [("DOCUMENTATION", options_yaml(option))])


def config_modes_fragment():
    """rke2_config's mode and kubelet_config options: their type, choices and default, as the common role's
    rke2_numa_config_mode and rke2_numa_kubelet_config declare them (the module documents what each choice does)."""
    options = {}
    for option, variable in (("mode", "config_mode"), ("kubelet_config", "kubelet_config")):
        spec = specs.option(PREFIX + variable)
        options[option] = {"type": spec["type"], "choices": spec["choices"], "default": spec["default"]}
    return fragment_file(["rke2_config's mode and kubelet_config options: type, choices and default as the common role's",
                          "rke2_numa_config_mode and rke2_numa_kubelet_config declare them - %s:" % GENERATED,
                          "do not edit here (the module documents each choice)."], [("DOCUMENTATION", options_yaml(options))])


def boot_method_fragment():
    """The boot method option of boot_params (method) and node_state_info (boot_method), as common's
    rke2_numa_boot_method declares it."""
    spec = specs.option(PREFIX + "boot_method")
    entry = {"description": spec["description"], "type": spec["type"], "choices": spec["choices"], "default": spec["default"]}
    return fragment_file(["The boot method option of boot_params (.boot_params) and node_state_info (.node_state_info), as the common",
                          "role's rke2_numa_boot_method declares it - %s:" % GENERATED, "do not edit here."],
                         [("DOCUMENTATION", "options: {}\n"), ("BOOT_PARAMS", options_yaml({"method": entry})),
                          ("NODE_STATE_INFO", options_yaml({"boot_method": entry}))])


def boot_methods_module():
    """module_utils/boot_methods.py: the boot methods' names for the modules on the node (auto picks one of them)."""
    methods = tuple(c for c in specs.choices(PREFIX + "boot_method") if c != "auto")
    return ('# -*- coding: utf-8 -*-\n# Copyright: (c) 2026, maitred.rke2_numa contributors\n'
            '# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)\n'
            '"""The boot methods a node\'s kernel arguments can be written with (auto detects one of them): the choices of\n'
            'the common role\'s rke2_numa_boot_method, %s - do not edit here."""\n\n'
            'from __future__ import annotations\n\n'
            'METHODS = %r\n' % (GENERATED, methods))


def managed_flags_fragment():
    """rke2_config's managed_flags option: its default is the kubelet flags the plan owns (kubelet_rules)."""
    option = {"managed_flags": {"description": "Kubelet flag names this module owns and replaces by name.", "type": "list",
                                "elements": "str", "default": list(kubelet_rules.MANAGED_KUBELET_FLAGS)}}
    return fragment_file(["rke2_config's managed_flags option, its default plugins/plugin_utils/kubelet_rules.py MANAGED_KUBELET_FLAGS -",
                          "generated by scripts/gen_specs.py (make specs): do not edit here."], [("DOCUMENTATION", options_yaml(option))])


# How each way of naming a call's objects (plugin_utils/kubectl.py KIND, STDIN, RAW, VIEW) reads in the documentation.
OBJECT_FORMS = {kubectl.KIND: "O(kind) and O(names)", kubectl.STDIN: "O(stdin) (of O(kind))", kubectl.RAW: "a O(raw) path",
                kubectl.VIEW: "none (C(config view))"}


def sends_words(send):
    """One request of a verb (kubectl.Sends) in the words of the module's documentation."""
    if send.resource in (kubectl.OBJECT, kubectl.PATH):
        what = "the objects" if send.resource == kubectl.OBJECT else "the path"
    else:
        what = "C(%s)" % "/".join(w for w in (kubectl.kubectl_resource(send.resource)[1], send.subresource) if w)
    where = " in every namespace" if send.namespaced == kubectl.EVERY else ""
    when = [kubectl.CONDITIONS[c][0] if c in kubectl.CONDITIONS else "with C(%s)" % c for c in send.when]
    return "C(%s) %s%s%s%s" % (send.verb, what, "" if send.named or send.resource == kubectl.PATH else ", unnamed", where,
                               " (%s)" % ", ".join(when) if when else "")


def verb_words(name, verb):
    """What kubectl ``name`` takes and sends, and whether it writes, for the verb option's description."""
    parts = ["C(%s) - %s" % (name, "a read, run in check mode" if verb.reads_only else "a write, skipped in check mode"),
             "objects: %s" % ", ".join(OBJECT_FORMS[form] for form in verb.objects),
             "options: %s" % (", ".join("C(%s)" % o for o in verb.options) or "none")]
    if verb.needs:
        parts.append("needs %s" % ", ".join("C(%s)" % o for o in verb.needs))
    parts.append("sends %s" % ("; ".join(sends_words(s) for s in verb.sends) or "no request"))
    return "; ".join(parts) + "."


def kubectl_verbs_fragment():
    """The kubectl module's verb option: its choices and what each verb takes and sends (kubectl.VERBS)."""
    option = {"verb": {"description": ["The kubectl command. For each: whether it writes (a write is skipped in check mode unless the task "
                                       "says C(check_mode=false)), the ways it takes its objects, the options it takes besides the "
                                       "common ones (O(options)), and the API requests it sends (returned as RV(requests); "
                                       "C(named) - of an object by its name) - what the scoped identity must be granted."]
                       + [verb_words(name, verb) for name, verb in kubectl.VERBS.items()],
                       "type": "str", "required": True, "choices": list(kubectl.VERBS)}}
    return fragment_file(["The kubectl module's verb option: its choices, and what each verb takes, sends and writes, from",
                          "plugins/plugin_utils/kubectl.py VERBS - generated by scripts/gen_specs.py (make specs): do not edit here."],
                         [("DOCUMENTATION", options_yaml(option))])


MINORS_START = ("<!-- kubelet minors: generated from plugins/plugin_utils/kubelet_rules.py KUBELET_MINORS by scripts/gen_specs.py "
                "(make specs); edit the table there -->")
MINORS_END = "<!-- end of the generated kubelet minors -->"


def kubernetes_doc():
    """docs/KUBERNETES.md's table: per minor of kubelet_rules.KUBELET_MINORS, each policy option's level and the
    gates' defaults - the rules the plan of a node running that minor is judged by."""
    minors = sorted(kubelet_rules.KUBELET_MINORS)
    entries = [kubelet_rules.KUBELET_MINORS[m] for m in minors]
    header = "| | " + " | ".join("%d.%d" % m for m in minors) + " |"
    lines = [MINORS_START, "", header, "|---|" + "---|" * len(minors)]
    for kind, title in (("cpu_options", "CPU Manager"), ("topology_options", "Topology Manager")):
        for name in sorted(set(o for e in entries for o in e[kind])):
            lines.append("| %s `%s` | %s |" % (title, name, " | ".join(e[kind].get(name) or "-" for e in entries)))
    for gate in sorted(set(g for e in entries for g in e["gates"])):
        lines.append("| gate `%s` | %s |" % (gate, " | ".join(
            "-" if gate not in e["gates"] else ("on" if e["gates"][gate] else "off") for e in entries)))
    lines.append("| `--config-dir` drop-ins | %s |" % " | ".join(e["config_dir"] for e in entries))
    lines.append("| CPU Manager checkpoint written (with PodLevelResourceManagers on) | %s |" % " | ".join(e["checkpoint"] for e in entries))
    lines.append("| release the entry describes | %s |" % " | ".join(e["source"] for e in entries))
    text = read("docs", "KUBERNETES.md")
    return replace_between(text, MINORS_START, MINORS_END, "\n".join(lines + ["", MINORS_END]), "docs/KUBERNETES.md")


def outputs():
    """{path relative to the repo: its content}."""
    out = {}
    for role in sorted(specs.role_specs()):
        if any("default" in s for s in specs.role_options(role).values()):
            out[os.path.join("roles", role, "defaults", "main.yml")] = defaults(role)
        out[os.path.join("roles", role, "README.md")] = role_readme(role)
    out[os.path.join("docs", "VARIABLES.md")] = variables_doc()
    out[os.path.join("plugins", "doc_fragments", "plan_options.py")] = plan_fragment()
    out[os.path.join("roles", "plan", "tasks", "numa_plan.yml")] = plan_task()
    out[os.path.join("playbooks", "tasks", "node_check.yml")] = check_task()
    out[os.path.join("playbooks", "tasks", "numa_plan.yml")] = plan_task(standalone=True)
    out[os.path.join("plugins", "doc_fragments", "boot_method.py")] = boot_method_fragment()
    out[os.path.join("plugins", "module_utils", "boot_methods.py")] = boot_methods_module()
    out[os.path.join("plugins", "doc_fragments", "managed_flags.py")] = managed_flags_fragment()
    out[os.path.join("plugins", "doc_fragments", "playbook_inputs.py")] = playbook_inputs_fragment()
    out[os.path.join("plugins", "doc_fragments", "config_modes.py")] = config_modes_fragment()
    out[os.path.join("plugins", "doc_fragments", "kubectl_verbs.py")] = kubectl_verbs_fragment()
    out[os.path.join("docs", "KUBERNETES.md")] = kubernetes_doc()
    return out


def main(argv):
    stale = []
    for rel, content in sorted(outputs().items()):
        current = read(rel) if os.path.exists(path(rel)) else None
        if current == content:
            continue
        stale.append(rel)
        if "--check" not in argv:
            os.makedirs(os.path.dirname(path(rel)), exist_ok=True)
            with open(path(rel), "w", encoding="utf-8") as f:
                f.write(content)
    if "--check" in argv and stale:
        print("stale (run make specs): %s" % ", ".join(stale))
        return 1
    print("%s: %s" % ("written" if stale else "up to date", ", ".join(stale) or "every generated file"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
