"""Sum up the rolling scenario's observations (tasks/observe.yml feeds it JSON on stdin).

Out (JSON): nodes.<name> = {unschedulable, plan, cordoned, failed};
mutations = [{node, verb, time}] - the API calls that changed a Node or
evicted/deleted a pod, in the order they arrived (the API stand-in's log);
starts.<name> = the node's rke2-agent start times (epoch seconds);
config.<name> = config.yaml's checksum;
users.<verb> = who made the mutations of that verb (the user the API stand-in authenticated);
refused = the calls the API refused as Unauthorized or Forbidden (401/403): "METHOD path user" - but the
roll's proof of its identity (dry runs, and the reads kubectl makes before a write RBAC denies), refused on purpose;
runs = the node events after the first `since` mutations - the mutations and
kubectl drain's listing of a node's pods (its first call, a write or not) -
grouped into consecutive runs on one node, each with {node, first, last,
calls, starts_inside}: a node is rolled in one run, and its agent restart
(the reset) falls inside it.
"""
import datetime
import json
import sys


def epoch(text):
    text = text.strip().rstrip("Z")
    if "." in text:  # date +%N gives nanoseconds; fromisoformat takes microseconds
        head, frac = text.split(".", 1)
        text = "%s.%s" % (head, frac[:6])
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def main():
    data = json.load(sys.stdin)
    nodes = {}
    for item in data["nodes"]["items"]:
        meta = item["metadata"]
        annotations = meta.get("annotations") or {}
        nodes[meta["name"]] = {"unschedulable": bool(item["spec"].get("unschedulable")),
                               "plan": (meta.get("labels") or {}).get("rke2-numa.maitred.io/plan"),
                               "cordoned": annotations.get("rke2-numa.maitred.io/cordoned"),
                               "failed": annotations.get("rke2-numa.maitred.io/failed")}
    mutations, events, users, refused = [], [], {}, []
    for line in data["log"].splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        path = entry.get("path") or ""
        # the roll's proof of its identity is refused on purpose: its server-side dry runs, the reads kubectl makes
        # before a write RBAC denies, an older kubectl's look at the OpenAPI document
        proof = ((entry.get("query") or {}).get("dryRun") == "All" or "rke2-numa-proof" in path
                 or path.endswith("/configmaps/rke2-numa-nodes") or path.startswith(("/swagger", "/openapi")))
        if int(entry.get("code", 0)) in (401, 403) and not proof:
            refused.append("%s %s %s" % (entry.get("method"), path, entry.get("user")))
        summary = entry.get("summary") or {}
        verb = summary.get("verb")
        selector = (entry.get("query") or {}).get("fieldSelector", "")
        if entry.get("path") == "/api/v1/pods" and selector.startswith("spec.nodeName="):  # kubectl drain lists the pods
            events.append({"node": selector.split("=", 1)[1], "verb": "list-pods", "time": epoch(entry["time"])})
            continue
        if verb not in ("patch", "evict", "delete") or not 200 <= int(entry.get("code", 0)) < 300 or summary.get("dryRun"):
            continue
        mutations.append({"node": summary.get("node"), "verb": verb, "time": epoch(entry["time"])})
        users.setdefault(verb, set()).add(entry.get("user"))
    mutations.sort(key=lambda m: m["time"])  # written when answered: concurrent evictions may be out of order
    since = mutations[data.get("since", 0) - 1]["time"] if data.get("since") else None
    events = sorted([m for m in mutations if since is None or m["time"] > since]
                    + [e for e in events if since is None or e["time"] > since], key=lambda m: m["time"])
    starts = {w: [epoch(t) for t in text.splitlines() if t.strip()] for w, text in data["starts"].items()}
    runs = []
    for m in events:
        if runs and runs[-1]["node"] == m["node"]:
            runs[-1].update(last=m["time"], calls=runs[-1]["calls"] + 1)
        else:
            runs.append({"node": m["node"], "first": m["time"], "last": m["time"], "calls": 1})
    for run in runs:
        run["starts_inside"] = len([t for t in starts.get(run["node"], []) if run["first"] <= t <= run["last"]])
    json.dump({"nodes": nodes, "mutations": mutations, "runs": runs, "starts": starts, "config": data["config"],
               "users": {verb: sorted(u or "" for u in who) for verb, who in users.items()}, "refused": refused}, sys.stdout)


if __name__ == "__main__":
    main()
