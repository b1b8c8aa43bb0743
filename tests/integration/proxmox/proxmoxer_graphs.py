"""What a proxmoxer monitoring script reads (graphs, counters, storage, uptime), decoded by proxmoxer 1.2
(Debian's python3-proxmoxer). Run by proxmoxer-graphs.test.ts against Corral over HTTPS:

    proxmoxer_graphs.py HOST:PORT USER TOKENNAME SECRET VMID

Prints one JSON line per step ({"step": ..., ...}); each value is reported with its Python type name, so the test
sees exactly what a script would get (int vs float vs str)."""
import json
import sys

from proxmoxer import ProxmoxAPI
from proxmoxer.core import ResourceException


def step(name, **data):
    print(json.dumps({"step": name, **data}), flush=True)


def typed(row):
    return {k: [type(v).__name__, v] for k, v in row.items()}


def main():
    host, user, token_name, secret, vmid = sys.argv[1:6]
    vmid = int(vmid)
    px = ProxmoxAPI(host, user=user, token_name=token_name, token_value=secret, verify_ssl=False)

    nodes = px.nodes.get()
    step("nodes", nodes=[typed(n) for n in nodes])
    row = [r for r in px.cluster.resources.get(type="vm") if r["vmid"] == vmid][0]
    node = row["node"]
    step("resource", row=typed(row))
    step("node-status", uptime=typed({"uptime": px.nodes(node).status.get()["uptime"]}))
    step("storage", storages=[typed(s) for s in px.nodes(node).storage.get()])
    step("storage-status", status=typed(px.nodes(node).storage("local-lvm").status.get()))
    step("current", status=typed(px.nodes(node).qemu(vmid).status.current.get()))
    for timeframe in ("hour", "day", "week", "month", "year"):
        points = px.nodes(node).qemu(vmid).rrddata.get(timeframe=timeframe, cf="AVERAGE")
        step("vm-rrd", timeframe=timeframe, points=[typed(p) for p in points])
    step("node-rrd", points=[typed(p) for p in px.nodes(node).rrddata.get(timeframe="hour", cf="MAX")])
    try:
        px.nodes(node).qemu(vmid).rrddata.get(timeframe="fortnight")
        step("bad-timeframe", accepted=True)
    except ResourceException as err:
        step("bad-timeframe", status_code=err.status_code, message=str(err), errors=err.errors)


if __name__ == "__main__":
    main()
