"""python_watch.py - the official Python client's watch against `fakeapi serve`.

Run by test_python_watch.sh as: python3 python_watch.py KUBECONFIG SERVER_URL
Prints one line per check, "PASS <desc>" or "FAIL <desc>: <why>"; the shell
script turns them into TAP.
"""
import json
import queue
import sys
import threading
import time
import urllib.request

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = "pywatch"


def report(ok, desc, why=""):
    print(("PASS %s" % desc) if ok else ("FAIL %s: %s" % (desc, why)), flush=True)


def cm(name, value):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"v": value})


def collect(stream_fn, out, **kw):
    """Run a Watch in a thread, putting (type, name, rv) or an exception in out."""
    w = watch.Watch()

    def run():
        try:
            for ev in w.stream(stream_fn, NS, **kw):
                obj = ev["object"]
                out.put((ev["type"], obj.metadata.name, int(obj.metadata.resource_version)))
        except Exception as e:  # noqa: BLE001 - handed to the test thread
            out.put(e)
        out.put(None)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return w, t


def drain(q, want, secs):
    """Take events from q until `want` of them arrived or secs passed."""
    got, end = [], time.time() + secs
    while len(got) < want and time.time() < end:
        try:
            item = q.get(timeout=max(0.01, end - time.time()))
        except queue.Empty:
            break
        if item is None or isinstance(item, Exception):
            got.append(item)
            break
        got.append(item)
    return got


def main():
    kubeconfig, url = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))

    # 1. ADDED, MODIFIED, DELETED on a live stream.
    q = queue.Queue()
    w, t = collect(v1.list_namespaced_config_map, q, timeout_seconds=20)
    time.sleep(0.3)
    v1.create_namespaced_config_map(NS, cm("a", "1"))
    mid = v1.patch_namespaced_config_map("a", NS, {"data": {"v": "2"}})
    rv_mid = int(mid.metadata.resource_version)
    v1.delete_namespaced_config_map("a", NS)
    got = drain(q, 3, 10)
    w.stop()
    types = [g[0] for g in got if isinstance(g, tuple)]
    report(types == ["ADDED", "MODIFIED", "DELETED"] and all(g[1] == "a" for g in got),
           "Watch().stream sees ADDED, MODIFIED, DELETED", repr(got))
    rvs = [g[2] for g in got if isinstance(g, tuple)]
    report(len(rvs) == 3 and rvs == sorted(rvs) and rvs[1] == rv_mid,
           "events carry increasing resourceVersions", repr(rvs))

    # 2. Resume from a resourceVersion: only what came after it.
    created = v1.create_namespaced_config_map(NS, cm("b", "1"))
    rv_b = int(created.metadata.resource_version)
    q = queue.Queue()
    w, t = collect(v1.list_namespaced_config_map, q, resource_version=str(rv_mid),
                   timeout_seconds=2)
    got = drain(q, 3, 10)
    w.stop()
    events = [g for g in got if isinstance(g, tuple)]
    report([(e[0], e[1]) for e in events] == [("DELETED", "a"), ("ADDED", "b")]
           and events[-1][2] == rv_b and all(e[2] > rv_mid for e in events),
           "a stream resumed from a resourceVersion sees only later changes", repr(got))

    # 3. After compaction, a stream from an old resourceVersion raises 410.
    for i in range(3):
        v1.patch_namespaced_config_map("b", NS, {"data": {"v": str(i + 2)}})
    req = urllib.request.Request(url + "/fakeapi/v1/compact", data=b"", method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        compacted = json.loads(resp.read()).get("compacted")
    status, why = None, "no exception"
    try:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, NS,
                                      resource_version=str(rv_b)):
            pass
    except ApiException as e:
        status, why = e.status, str(e.reason)
    report(status == 410 and "Expired" in why,
           "stream from a compacted resourceVersion raises ApiException 410",
           "status %r (%s), compacted %r" % (status, why, compacted))

    # 4. The list + watch an informer does still works after compaction.
    lst = v1.list_namespaced_config_map(NS)
    q = queue.Queue()
    w, t = collect(v1.list_namespaced_config_map, q,
                   resource_version=lst.metadata.resource_version, timeout_seconds=5)
    time.sleep(0.3)
    v1.create_namespaced_config_map(NS, cm("c", "1"))
    got = drain(q, 1, 10)
    w.stop()
    report(len(got) == 1 and isinstance(got[0], tuple) and got[0][:2] == ("ADDED", "c"),
           "list then watch from the list's resourceVersion after compaction", repr(got))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        report(False, "python watch script ran to the end", "%s: %s" % (type(e).__name__, e))
