#!/usr/bin/env python3
"""e2e_admin.py: admin configuration that conflicts stops, loudly (issue 11, part 5), end to end.

  bindings   a second NamespaceBinding in a namespace: vmop picks neither. A new VM reports
             VirtualMachineConditionPlacementReady False MultipleBindings naming both and nothing
             is created in vCenter; both bindings report Ready False Conflict; the namespace's
             images stay; the delete of a running VM waits (DeleteFailed event, its VM stays in
             vCenter). Deleting the extra binding lets the new VM be created and the delete finish.
  endpoints  17 more VCenterEndpoints, each with a library of its own (the simulator's
             -extra-libraries): every one of the 18 endpoints' items is a ClusterVirtualMachineImage
             (vmop once scanned 16 endpoints and deleted the images of the others).
  feedcap    vmop restarted with --feed-max-folders 1 --feed-max-endpoints 1, a second binding
             on another folder and a second endpoint in use: each limit is logged and counted
             (vmop_vm_feed_unwatched_folders / _endpoints 1), not silent, and back to 0 after.
  gc         (issue 11, part 6) vmop restarted with --image-cache-grace 0: a VM's clone source
             (vmop-image-*) is destroyed once the binding no longer offers its library, while the
             VM made from it keeps running; offered again, the next VM deploys a new one.
Every wait is bounded polling. Usage: e2e_admin.py BUILD_DIR [TEST...]. Never prints secrets.
"""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as base  # noqa: E402
from e2e_tenancy import vms_named, wait_event  # noqa: E402
from e2e_vm import NS, check, cond, vm_obj, wait_cond, wait_for, wait_running  # noqa: E402

N_EXTRA = 17  # endpoints beyond devenv's own: more than the old cap of 16


def cluster_get(env, kind, name):
    p = env.kubectl("get", kind, name, "-o", "json", check=False)
    return json.loads(p.stdout) if p.returncode == 0 else None


def binding(env, name):
    return env.get("namespacebinding", name)


def ready_reason(obj):
    c = cond(obj, "Ready") or {}
    return c.get("status"), c.get("reason"), c.get("message") or ""


def metric(env, name):
    port = open(os.path.join(env.dir, "health.port")).read().strip()
    body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=10).read().decode()
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def second_binding(env, name, folder=None):
    """A copy of devenv's binding "vsphere" under another name (and folder, if given)."""
    b = binding(env, "vsphere")
    spec = dict(b["spec"])
    if folder:
        spec["vmFolder"] = folder
    obj = {"apiVersion": b["apiVersion"], "kind": "NamespaceBinding",
           "metadata": {"name": name, "namespace": NS}, "spec": spec}
    env.kubectl("apply", "-f", "-", stdin=json.dumps(obj))


def image_names(env, kind):
    out = json.loads(env.kubectl("get", kind, "-A", "-o", "json").stdout)
    return sorted(i["metadata"]["name"] for i in out.get("items") or [])


# ---- tests -----------------------------------------------------------------------------------

def test_bindings(env):
    env.apply([vm_obj("adm-old")])
    wait_running(env, "adm-old")
    images_before = image_names(env, "vmi")
    check(images_before, "no VirtualMachineImages in %s before the test" % NS)
    second_binding(env, "vsphere-2")
    try:
        for n in ("vsphere", "vsphere-2"):
            wait_for(lambda n=n: ready_reason(binding(env, n))[:2] == ("False", "Conflict"),
                     "binding %s Ready False Conflict" % n)
        msg = ready_reason(binding(env, "vsphere-2"))[2]
        check("more than one NamespaceBinding" in msg, "binding Ready message %r" % msg)

        env.apply([vm_obj("adm-new")])
        c = wait_cond(env, "adm-new", "VirtualMachineConditionPlacementReady", "False",
                      "MultipleBindings")
        msg = c.get("message") or ""
        check('"vsphere"' in msg and '"vsphere-2"' in msg and "all but one" in msg,
              "PlacementReady message %r does not name both bindings and the fix" % msg)
        got = env.get("vm", "adm-new")
        check(not (got.get("status") or {}).get("uniqueID"), "adm-new got a uniqueID")
        check((cond(got, "Ready") or {}).get("status") == "False", "adm-new Ready is not False")
        check(vms_named(env, "adm-new") == [], "a VM was created for adm-new")
        check("MultipleBindings" in env.kubectl("describe", "vm", "adm-new", "-n", NS).stdout,
              "kubectl describe does not show MultipleBindings")

        # the delete of a VM that exists waits: no binding is picked to delete it with
        old_moref = vms_named(env, "adm-old")
        check(len(old_moref) == 1, "adm-old has %d VMs in vCenter" % len(old_moref))
        env.kubectl("delete", "vm", "adm-old", "-n", NS, "--wait=false")
        wait_event(env, "adm-old", "DeleteFailed", ("more than one NamespaceBinding",))
        check(env.get("vm", "adm-old") is not None, "adm-old is gone while bindings conflict")
        check(vms_named(env, "adm-old") == old_moref, "adm-old's VM was deleted in vCenter")
        check(image_names(env, "vmi") == images_before,
              "the namespace's images changed while its bindings conflict")
    finally:
        env.kubectl("delete", "namespacebinding", "vsphere-2", "-n", NS, "--wait=true",
                    check=False)

    # one binding again: everything proceeds
    wait_for(lambda: env.get("vm", "adm-old") is None, "adm-old deleted once one binding is left")
    wait_for(lambda: vms_named(env, "adm-old") == [], "adm-old's VM destroyed in vCenter")
    wait_running(env, "adm-new")
    wait_for(lambda: ready_reason(binding(env, "vsphere"))[0] == "True",
             "binding vsphere Ready again")
    check(image_names(env, "vmi") == images_before, "the namespace's images changed")
    base.delete_and_wait(env, "adm-new")


def test_endpoints(env):
    libs = {lib["name"]: lib for lib in env.sim.get("libraries") or []}
    extra = ["vmop-extra-%02d" % k for k in range(1, N_EXTRA + 1)]
    for name in extra:
        check(name in libs, "the simulator has no library %s (-extra-libraries)" % name)
    ep = cluster_get(env, "vcenterendpoint", "vcsim")
    before = image_names(env, "cvmi")
    objs = []
    for k, lib in enumerate(extra, 1):
        spec = dict(ep["spec"])
        spec["clusterContentLibraries"] = [{"name": lib}]
        objs.append({"apiVersion": ep["apiVersion"], "kind": "VCenterEndpoint",
                     "metadata": {"name": "vcsim-%02d" % k}, "spec": spec})
    env.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                       "items": objs}))
    try:
        want = len(before) + N_EXTRA

        def all_there():
            names = image_names(env, "cvmi")
            return names if len(names) >= want else None
        names = wait_for(all_there, "%d ClusterVirtualMachineImages" % want, timeout=180)
        out = json.loads(env.kubectl("get", "cvmi", "-o", "json").stdout)
        shown = {(i.get("status") or {}).get("name") for i in out.get("items") or []}
        for lib in extra:  # each endpoint's own item, by its display name (status.name)
            check(lib + "-ovf" in shown, "no ClusterVirtualMachineImage for %s's item" % lib)
        for b in before:
            check(b in names, "cluster image %s went away" % b)
        # every endpoint logged in and reports Ready
        for k in range(1, N_EXTRA + 1):
            wait_for(lambda k=k: ready_reason(cluster_get(env, "vcenterendpoint",
                                                          "vcsim-%02d" % k))[0] == "True",
                     "VCenterEndpoint vcsim-%02d Ready" % k)
    finally:
        env.kubectl("delete", "vcenterendpoint", *["vcsim-%02d" % k
                                                   for k in range(1, N_EXTRA + 1)],
                    "--wait=true", check=False)
    wait_for(lambda: image_names(env, "cvmi") == before,
             "the extra endpoints' cluster images removed with them")


def test_feedcap(env):
    restart_with(env, "--feed-max-folders 1 --feed-max-endpoints 1")
    log = os.path.join(env.dir, "operator.log")
    ep = cluster_get(env, "vcenterendpoint", "vcsim")
    try:
        # two folders on endpoint vcsim (a second binding in default: it conflicts, but both
        # name their folders, which is what the change feed watches) ...
        second_binding(env, "vsphere-other", folder="/DC0/host")
        # ... and a second endpoint used by a binding in another namespace
        env.kubectl("create", "namespace", "adm-b")
        env.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": ep["apiVersion"], "kind": "VCenterEndpoint",
             "metadata": {"name": "vcsim-b"}, "spec": ep["spec"]}))
        b = binding(env, "vsphere")
        env.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": b["apiVersion"], "kind": "NamespaceBinding",
             "metadata": {"name": "vsphere", "namespace": "adm-b"},
             "spec": dict(b["spec"], endpointRef={"name": "vcsim-b"})}))
        wait_for(lambda: metric(env, "vmop_vm_feed_unwatched_folders") == 1,
                 "vmop_vm_feed_unwatched_folders 1")
        wait_for(lambda: metric(env, "vmop_vm_feed_unwatched_endpoints") == 1,
                 "vmop_vm_feed_unwatched_endpoints 1")
        text = lambda: base.Env.operator_log(env, n=5000, path=log)  # noqa: E731
        wait_for(lambda: "over the limit of 1 are not watched" in text(),
                 "the folder limit in the operator log")
        wait_for(lambda: "over the limit of 1 endpoints with a feed" in text(),
                 "the endpoint limit in the operator log")
        env.kubectl("delete", "namespacebinding", "vsphere-other", "-n", NS, "--wait=true")
        env.kubectl("delete", "namespace", "adm-b", "--wait=true", timeout=120)
        wait_for(lambda: metric(env, "vmop_vm_feed_unwatched_folders") == 0,
                 "vmop_vm_feed_unwatched_folders back to 0")
        wait_for(lambda: metric(env, "vmop_vm_feed_unwatched_endpoints") == 0,
                 "vmop_vm_feed_unwatched_endpoints back to 0")
    finally:
        env.kubectl("delete", "namespacebinding", "vsphere-other", "-n", NS, "--wait=true",
                    check=False)
        env.kubectl("delete", "namespace", "adm-b", "--wait=false", check=False)
        env.kubectl("delete", "vcenterendpoint", "vcsim-b", "--wait=true", check=False)
        restart_with(env, None)


def cache_templates(env):
    return sorted(e["name"] for e in env.vimc("ls", "vm") or []
                  if e.get("name", "").startswith("vmop-image-"))


def restart_with(env, extra):
    """Restarts vmop with extra flags (None: the devenv's own); returns the original flags."""
    path = os.path.join(env.dir, "operator.args")
    orig = getattr(env, "orig_args", None) or open(path).read().strip()
    env.orig_args = orig
    with open(path, "w") as f:
        f.write(orig + (" " + extra if extra else "") + "\n")
    env.devenv("restart", env.dir, "operator")


def test_gc(env):
    restart_with(env, "--image-cache-grace 0")
    libs = binding(env, "vsphere")["spec"]["contentLibraries"]
    try:
        env.apply([vm_obj("adm-gc")])
        wait_running(env, "adm-gc")
        tmpls = wait_for(lambda: cache_templates(env), "a vmop-image-* cache template")
        vm_moref = vms_named(env, "adm-gc")
        check(len(vm_moref) == 1, "adm-gc has %d VMs" % len(vm_moref))

        env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                    json.dumps({"spec": {"contentLibraries": []}}))
        wait_for(lambda: not [t for t in cache_templates(env) if t in tmpls],
                 "the cache template %s destroyed once no binding offers its item" % tmpls,
                 timeout=120)
        check(vms_named(env, "adm-gc") == vm_moref, "the VM cloned from the template is gone")
        wait_for(lambda: (metric(env, "vmop_image_cache_templates_collected_total") or 0) >= 1,
                 "vmop_image_cache_templates_collected_total counted it")
        check((env.get("vm", "adm-gc").get("status") or {}).get("powerState") == "PoweredOn",
              "adm-gc is not PoweredOn after its template went")
    finally:
        env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                    json.dumps({"spec": {"contentLibraries": libs}}), check=False)
    # offered again: the image comes back and a new VM deploys a new template
    wait_for(lambda: env.get("vmi", "vmop-tiny-ovf") or [
        i for i in json.loads(env.kubectl("get", "vmi", "-n", NS, "-o", "json").stdout)["items"]
        if (i.get("status") or {}).get("name") == "vmop-tiny-ovf"], "the image back", timeout=120)
    env.apply([vm_obj("adm-gc2")])
    wait_running(env, "adm-gc2")
    check(cache_templates(env), "no cache template after a new clone")
    for n in ("adm-gc", "adm-gc2"):
        base.delete_and_wait(env, n)
    restart_with(env, None)


TESTS = [("bindings", test_bindings), ("endpoints", test_endpoints), ("feedcap", test_feedcap),
         ("gc", test_gc)]


def prepare(env):
    env.env["DEVENV_VCSIM_ARGS"] = "-extra-libraries %d" % N_EXTRA


if __name__ == "__main__":
    sys.exit(base.run_main(TESTS, prepare))
