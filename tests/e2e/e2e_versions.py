#!/usr/bin/env python3
"""e2e_versions.py: every served vmoperator.vmware.com version (v1alpha1 .. v1alpha6) with the
pinned kubectl, through the API server's calls to vmop's conversion webhook (storage v1alpha6).

  versions   a VirtualMachine applied in each version's own shape (v1alpha1: lower-case
             powerState, networkInterfaces, vmMetadata with a Secret; v1alpha2: network.interfaces
             and bootstrap.cloudInit.rawCloudConfig; v1alpha3+: spec.image and cloudInit.instanceID
             too) each reaches PoweredOn (poweredOn, phase Created, vmIp when read in v1alpha1),
             reads back in all six versions with the right spelling, and has its user data in
             vCenter; once deleted, each is gone from vCenter
  cloudinit  v1alpha1 VMs whose vmMetadata names a Secret (transports CloudInit and ExtraConfig,
             keys user-data and guestinfo.userdata): guestinfo read back from vCenter and decoded by
             Debian's cloud-init gives exactly the Secret's #cloud-config, which passes cloud-init's
             schema and whose write_files cloud-init's own module writes with the content given;
             instance-id and local-hostname as v1alpha6 says
  readback   one object of each kind (VirtualMachine written in v1alpha3, VirtualMachineClass and
             VirtualMachineSetResourcePolicy in v1alpha1, VirtualMachineService in v1alpha6, the
             images as vmop writes them) reads back in every version with that apiVersion and its
             key fields; printer columns in v1alpha1/2/3; fields only v1alpha6 holds
             (VirtualMachine spec.volumeAttributesClassName, VirtualMachineService spec.ipFamilies)
             survive a label, a merge patch and a replace through v1alpha2 (the conversion-data
             annotation), while what v1alpha2 changed takes effect
  configmap  a v1alpha1 VM with vmMetadata.configMapName: VirtualMachineBootstrapReady False
             NotSupported, nothing in vCenter, the ConfigMap spelling read back in v1alpha1; switched
             to secretName through v1alpha1 it runs
Every wait is bounded polling. Usage: e2e_versions.py BUILD_DIR [TEST...]. Runs the harness's
secrets check (canary.py) at the end. Prints no user data.
"""
import base64
import json
import os
import grp
import pwd
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as e  # noqa: E402  (shared devenv/kubectl/vimc helpers, canary scan)
from e2e_cloudinit import cloudinit_read  # noqa: E402  (Debian's cloud-init VMware datasource)

from cloudinit import helpers, user_data, util  # noqa: E402  (Debian's cloud-init package)
from cloudinit.config import cc_write_files, schema  # noqa: E402

GROUP = "vmoperator.vmware.com"
VERSIONS = ["v1alpha%d" % i for i in range(1, 7)]
HUB = "v1alpha6"
NS = e.NS
NET = "vm-network"
CONV_ANN = GROUP + "/conversion-data"
CM_ANN = GROUP + "/v1a1-configmap-md-transport"


def res(plural, version):
    return "%s.%s.%s" % (plural, version, GROUP)


def get_in(env, plural, version, name, ns=NS):
    """The object read through version's resource path (ns None: cluster-scoped), or None."""
    args = ["get", res(plural, version), name, "-o", "json"] + (["-n", ns] if ns else [])
    p = env.kubectl(*args, check=False)
    if p.returncode != 0:
        e.check("NotFound" in p.stderr, "kubectl get %s %s: %s" % (res(plural, version), name,
                                                                   p.stderr.strip()[-300:]))
        return None
    o = json.loads(p.stdout)
    e.check(o.get("apiVersion") == "%s/%s" % (GROUP, version),
            "%s read through %s has apiVersion %r" % (name, version, o.get("apiVersion")))
    return o


def dig(o, path):
    for k in path.split("."):
        if not isinstance(o, dict):
            return None
        o = o.get(k)
    return o


def vmi_name(env):
    items = json.loads(env.kubectl("get", res("virtualmachineimages", HUB), "-n", NS,
                                   "-o", "json").stdout)["items"]
    names = [i["metadata"]["name"] for i in items
             if (i.get("status") or {}).get("name") == "vmop-tiny-ovf"]
    e.check(len(names) == 1, "VirtualMachineImages named vmop-tiny-ovf: %r" % names)
    return names[0]


def vm_manifest(version, name, secret, vmi=None, key="user-data", transport="CloudInit",
                extra=None):
    """A VirtualMachine in version's own shape."""
    spec = {"imageName": "vmop-tiny-ovf", "className": "best-effort-small",
            "storageClass": "wcp-default"}
    if version == "v1alpha1":
        spec.update({"powerState": "poweredOn", "powerOffMode": "trySoft",
                     "networkInterfaces": [{"networkName": NET}]})
        if secret:
            spec["vmMetadata"] = {"secretName": secret, "transport": transport}
    else:
        spec.update({"powerState": "PoweredOn",
                     "network": {"interfaces": [{"name": "eth0", "network": {"name": NET}}]}})
        if secret:
            spec["bootstrap"] = {"cloudInit": {"rawCloudConfig": {"name": secret, "key": key}}}
        # v1alpha2 names the image by its display name, as v1alpha2 manifests (CAPV) do: the
        # mutating webhook resolves the spec.image {name} that v1alpha2's conversion writes
        if version != "v1alpha2" and vmi:  # spec.image and cloudInit.instanceID: v1alpha3+
            spec["image"] = {"kind": "VirtualMachineImage", "name": vmi}
            if secret:
                spec["bootstrap"]["cloudInit"]["instanceID"] = "iid-" + name
    if extra:
        spec.update(extra)
    return {"apiVersion": "%s/%s" % (GROUP, version), "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def secret(name, body=None, key="user-data"):
    """A bootstrap Secret carrying the harness's user-data canary (canary.py)."""
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS},
            "stringData": {key: e.canary.user_data(body or "#cloud-config\nusers:\n- name: ver\n")}}


def wait_a1_running(env, name):
    """Bounded: the VM read through v1alpha1 is poweredOn, phase Created, with a vmIp."""
    def ok():
        o = get_in(env, "virtualmachines", "v1alpha1", name)
        st = (o or {}).get("status") or {}
        if st.get("powerState") == "poweredOn" and st.get("phase") == "Created" and st.get("vmIp"):
            return o
        return None
    return e.wait_for(ok, "%s poweredOn with a vmIp read in v1alpha1" % name)


def check_vm_all_versions(env, name, secret_name, key="user-data", transport="CloudInit"):
    """name read in every version agrees with the hub read, in each version's own spelling."""
    hub = get_in(env, "virtualmachines", HUB, name)
    e.check(hub, "%s not found in %s" % (name, HUB))
    hs, hst = hub["spec"], hub.get("status") or {}
    ip = dig(hst, "network.primaryIP4")
    e.check(ip and hst.get("uniqueID") and hs.get("image", {}).get("name"),
            "%s hub lacks IP / uniqueID / image: %r" % (name, (ip, hst.get("uniqueID"),
                                                               hs.get("image"))))
    e.check(CONV_ANN not in (hub["metadata"].get("annotations") or {}),
            "%s: the hub carries the conversion-data annotation" % name)
    for v in VERSIONS:
        o = get_in(env, "virtualmachines", v, name)
        e.check(o, "%s not found through %s" % (name, v))
        s, st = o.get("spec") or {}, o.get("status") or {}
        where = "%s read in %s" % (name, v)
        e.check(o["metadata"]["uid"] == hub["metadata"]["uid"], where + ": another uid")
        for k in ("className", "imageName", "storageClass"):
            e.check(s.get(k) == hs.get(k), "%s: spec.%s %r, hub %r" % (where, k, s.get(k), hs.get(k)))
        e.check(st.get("uniqueID") == hst["uniqueID"], where + ": status.uniqueID %r"
                % st.get("uniqueID"))
        if v == "v1alpha1":
            e.check(s.get("powerState") == "poweredOn" and st.get("powerState") == "poweredOn",
                    "%s: power states %r / %r" % (where, s.get("powerState"), st.get("powerState")))
            e.check(s.get("powerOffMode") == "trySoft", "%s: powerOffMode %r" % (where,
                                                                                s.get("powerOffMode")))
            e.check(s.get("networkInterfaces") == [{"networkName": NET}],
                    "%s: networkInterfaces %r" % (where, s.get("networkInterfaces")))
            e.check("network" not in s and "bootstrap" not in s and "image" not in s,
                    "%s: hub-only spec keys %r" % (where, sorted(s)))
            e.check(s.get("vmMetadata") == {"secretName": secret_name, "transport": transport},
                    "%s: vmMetadata %r" % (where, s.get("vmMetadata")))
            e.check(st.get("vmIp") == ip and st.get("phase") == "Created",
                    "%s: vmIp %r phase %r" % (where, st.get("vmIp"), st.get("phase")))
            nis = st.get("networkInterfaces") or []
            e.check(len(nis) == 1 and ip in (nis[0].get("ipAddresses") or []),
                    "%s: status.networkInterfaces %r" % (where, nis))
        else:
            e.check(s.get("powerState") == "PoweredOn" and st.get("powerState") == "PoweredOn",
                    "%s: power states %r / %r" % (where, s.get("powerState"), st.get("powerState")))
            ifs = dig(s, "network.interfaces") or []
            e.check(len(ifs) == 1 and ifs[0].get("name") == "eth0" and
                    dig(ifs[0], "network.name") == NET, "%s: network.interfaces %r" % (where, ifs))
            e.check(dig(s, "bootstrap.cloudInit.rawCloudConfig") == {"name": secret_name, "key": key},
                    "%s: rawCloudConfig %r" % (where, dig(s, "bootstrap.cloudInit.rawCloudConfig")))
            e.check(dig(st, "network.primaryIP4") == ip, "%s: primaryIP4 %r"
                    % (where, dig(st, "network.primaryIP4")))
            e.check("vmMetadata" not in s and "networkInterfaces" not in s and "phase" not in st,
                    "%s: v1alpha1 keys present" % where)
        if v in ("v1alpha1", "v1alpha2"):
            e.check("instanceUUID" not in s and "biosUUID" not in s and "image" not in s,
                    "%s: v1alpha3+ spec keys %r" % (where, sorted(s)))
            e.check(CONV_ANN in (o["metadata"].get("annotations") or {}),
                    "%s: no conversion-data annotation keeps the hub's fields" % where)
        else:
            e.check(s.get("image") == hs["image"], "%s: spec.image %r" % (where, s.get("image")))
            for k in ("instanceUUID", "biosUUID"):
                e.check(s.get(k) == hs.get(k), "%s: spec.%s %r" % (where, k, s.get(k)))
            e.check(dig(s, "bootstrap.cloudInit.instanceID") ==
                    dig(hs, "bootstrap.cloudInit.instanceID"), where + ": cloudInit.instanceID")
        if v == "v1alpha2":  # the image as status.image (when the hub names its kind)
            want = ((hs["image"]["kind"], hs["image"]["name"]) if hs["image"].get("kind")
                    else (None, None))
            e.check((dig(st, "image.kind"), dig(st, "image.name")) == want,
                    "%s: status.image %r, want %r" % (where, st.get("image"), want))
    return hub


def delete_vms(env, names):
    """Deletes the VMs, waits until the objects are gone; returns nothing. The caller checks
    vCenter."""
    for n in names:
        env.kubectl("delete", "vm", n, "-n", NS, "--wait=false", "--ignore-not-found")
    e.wait_for(lambda: all(env.get("vm", n) is None for n in names),
               "%s deleted" % " ".join(names))


# ---- tests -----------------------------------------------------------------------------------

def test_versions(env):
    vmi = vmi_name(env)
    names = {v: "ver-%s" % v.replace("v1alpha", "a") for v in VERSIONS}
    objs = [secret("ver-ud")] + [vm_manifest(v, names[v], "ver-ud", vmi=vmi) for v in VERSIONS]
    uids = {}
    try:
        env.apply(objs)
        for v in VERSIONS:
            hub = e.wait_running(env, names[v])  # read in v1alpha6 (kubectl's preferred version)
            e.check(hub["apiVersion"] == "%s/%s" % (GROUP, HUB), "vm reads as %r, not %s"
                    % (hub["apiVersion"], HUB))
            wait_a1_running(env, names[v])
            uids[v] = hub["status"]["uniqueID"]
            # every version's VM names its image with a kind: v1alpha1/v1alpha2 by display name,
            # resolved by the mutating webhook through the conversion
            e.check(hub["spec"].get("image") == {"kind": "VirtualMachineImage", "name": vmi},
                    "%s: stored spec.image %r, want %s" % (names[v], hub["spec"].get("image"), vmi))
        for v in VERSIONS:
            hub = check_vm_all_versions(env, names[v], "ver-ud")
            want_iid = None if v in ("v1alpha1", "v1alpha2") else "iid-" + names[v]
            got_iid = dig(hub, "spec.bootstrap.cloudInit.instanceID")
            e.check(got_iid == (want_iid or hub["spec"]["biosUUID"]),
                    "%s: instanceID %r, want %r" % (names[v], got_iid, want_iid or "biosUUID"))
            ec = env.vimc("vm", "info", uids[v]).get("extraConfig") or {}
            e.check(ec.get("vmservice.namespacedName") == "%s/%s" % (NS, names[v]),
                    "%s: vCenter namespacedName %r" % (names[v], ec.get("vmservice.namespacedName")))
            for k in ("guestinfo.userdata", "guestinfo.metadata"):
                e.check(ec.get(k), "%s: no %s in vCenter" % (names[v], k))
    finally:
        delete_vms(env, list(names.values()))
    for v, uid in uids.items():
        e.check(env.vimc("vm", "info", uid, check=False) is None,
                "%s (%s) still in vCenter after the delete" % (names[v], uid))


def decoded_userdata(env, uid):
    keys = env.vimc("vm", "guestinfo", "--reveal", uid)
    src = cloudinit_read(keys)
    ud = src.userdata_raw.decode() if isinstance(src.userdata_raw, bytes) else src.userdata_raw
    return src, ud


def cloud_config_of(ud, run_dir):
    """The #cloud-config cloud-init's user-data processor finds in ud, schema-checked."""
    msg = user_data.UserDataProcessor(helpers.Paths({"run_dir": run_dir})).process(ud)
    parts = [p.get_payload(decode=True) for p in msg.walk()
             if p.get_content_type() == "text/cloud-config"]
    e.check(len(parts) == 1, "cloud-init found %d cloud-config parts" % len(parts))
    cfg = util.load_yaml(parts[0].decode())
    e.check(isinstance(cfg, dict), "the cloud-config is not a mapping")
    try:
        schema.validate_cloudconfig_schema(cfg, schema.get_schema(), strict=True)
    except schema.SchemaValidationError as ex:
        raise AssertionError("cloud-init's schema refuses the cloud-config: %s" % ex)
    return cfg


def test_cloudinit(env):
    out = tempfile.mkdtemp(prefix="vmop-ver-ci.")
    owner = "%s:%s" % (pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name)
    cases = []  # (vm name, transport, key, file path, file text, host name)
    for name, transport, key in (("ver-ci", "CloudInit", "user-data"),
                                 ("ver-ci-ec", "ExtraConfig", "guestinfo.userdata")):
        text = "written by cloud-init for %s via %s\n" % (name, transport)
        path = os.path.join(out, name, "motd")
        cases.append((name, transport, key, path, text, name + "-guest"))
    objs = []
    bodies = {}
    for name, transport, key, path, text, host in cases:
        body = e.canary.user_data(
            "#cloud-config\nhostname: %s\nwrite_files:\n- path: %s\n  encoding: b64\n"
            "  content: %s\n  permissions: '0640'\n" % (host, path,
                                                         base64.b64encode(text.encode()).decode()))
        bodies[name] = body
        objs.append({"apiVersion": "v1", "kind": "Secret",
                     "metadata": {"name": name + "-ud", "namespace": NS},
                     "stringData": {key: body}})
        objs.append(vm_manifest("v1alpha1", name, name + "-ud", transport=transport))
    try:
        env.apply(objs)
        for name, transport, key, path, text, host in cases:
            hub = e.wait_running(env, name)
            a1 = wait_a1_running(env, name)
            e.check(dig(a1, "spec.vmMetadata") == {"secretName": name + "-ud",
                                                   "transport": transport},
                    "%s: vmMetadata read in v1alpha1 %r" % (name, dig(a1, "spec.vmMetadata")))
            e.check(dig(hub, "spec.bootstrap.cloudInit.rawCloudConfig") ==
                    {"name": name + "-ud", "key": key},
                    "%s: hub rawCloudConfig %r" % (name, dig(hub, "spec.bootstrap.cloudInit")))
            src, ud = decoded_userdata(env, hub["status"]["uniqueID"])
            e.check(ud == bodies[name], "%s: cloud-init user data differs from the Secret's "
                    "(lengths %d vs %d)" % (name, len(ud or ""), len(bodies[name])))
            e.check(src.get_instance_id() == hub["spec"]["biosUUID"],
                    "%s: instance-id %r, want spec.biosUUID" % (name, src.get_instance_id()))
            e.check(src.metadata.get("local-hostname") == name,
                    "%s: local-hostname %r" % (name, src.metadata.get("local-hostname")))
            cfg = cloud_config_of(ud, tempfile.mkdtemp(dir=out))
            e.check(cfg.get("hostname") == host, "%s: cloud-config hostname %r" % (name,
                                                                                   cfg.get("hostname")))
            files = cfg.get("write_files") or []
            e.check(len(files) == 1 and files[0].get("path") == path,
                    "%s: write_files %r" % (name, [f.get("path") for f in files]))
            e.check(not os.path.exists(path), "%s: %s exists before cloud-init ran" % (name, path))
            cc_write_files.write_files("write_files", files, owner)
            with open(path) as f:
                got = f.read()
            e.check(got == text, "%s: cloud-init wrote %r, want %r" % (name, got, text))
            mode = os.stat(path).st_mode & 0o777
            e.check(mode == 0o640, "%s: file mode %o, want 640" % (name, mode))
    finally:
        shutil.rmtree(out, ignore_errors=True)
        delete_vms(env, [c[0] for c in cases])


def wait_obj(env, plural, version, name, pred, what, ns=NS):
    return e.wait_for(lambda: (lambda o: o if o and pred(o) else None)(
        get_in(env, plural, version, name, ns)), what)


def table(env, *args):
    """kubectl get's table output: the header's column names and a row dict per NAME."""
    lines = [ln for ln in env.kubectl("get", *args).stdout.splitlines() if ln.strip()]
    e.check(lines, "kubectl get %s printed nothing" % " ".join(args))
    head = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", head)]
    cols = head.split()
    rows = {}
    for ln in lines[1:]:
        cells = [ln[a:b].strip() for a, b in zip(starts, starts[1:] + [len(ln) + 1])]
        rows[cells[0]] = dict(zip(cols, cells))
    return cols, rows


def check_columns(env, hub_rb):
    ip = hub_rb["status"]["network"]["primaryIP4"]
    cols, rows = table(env, res("virtualmachines", "v1alpha2"), "-n", NS)
    e.check(cols == ["NAME", "POWER-STATE", "AGE"], "v1alpha2 columns %r" % cols)
    for n in ("ver-rb", "ver-rb6"):
        e.check(n in rows and rows[n]["POWER-STATE"] == "PoweredOn",
                "v1alpha2 list: %s row %r" % (n, rows.get(n)))
    cols, rows = table(env, res("virtualmachines", "v1alpha2"), "-n", NS, "-o", "wide")
    r = rows.get("ver-rb") or {}
    e.check(r.get("CLASS") == "best-effort-small" and ip in r.values(),
            "v1alpha2 wide row %r (want the class and %s)" % (r, ip))
    cols, rows = table(env, res("virtualmachines", "v1alpha1"), "-n", NS, "-o", "wide")
    r = rows.get("ver-rb") or {}
    e.check(r.get("POWER-STATE") == "poweredOn" and r.get("CLASS") == "best-effort-small" and
            ip in r.values(), "v1alpha1 wide row %r (want poweredOn, the class, vmIp %s)" % (r, ip))
    cols, rows = table(env, res("virtualmachines", "v1alpha3"), "-n", NS, "-o", "wide")
    r = rows.get("ver-rb") or {}
    e.check(r.get("IMAGE") == hub_rb["spec"]["image"]["name"],
            "v1alpha3 wide row %r (want image %s)" % (r, hub_rb["spec"]["image"]["name"]))


def check_class(env):
    spec = {"description": "ver-class: written in v1alpha1",
            "hardware": {"cpus": 1, "memory": "1Gi"},
            "policies": {"resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}}
    env.apply([{"apiVersion": "%s/v1alpha1" % GROUP, "kind": "VirtualMachineClass",
                "metadata": {"name": "ver-class", "namespace": NS}, "spec": spec}])
    hub = get_in(env, "virtualmachineclasses", HUB, "ver-class")
    for v in VERSIONS:
        o = get_in(env, "virtualmachineclasses", v, "ver-class")
        e.check(o, "ver-class not found through %s" % v)
        s = o.get("spec") or {}
        for k, want in spec.items():
            e.check(s.get(k) == want, "ver-class in %s: spec.%s %r" % (v, k, s.get(k)))
        if v == "v1alpha1":
            e.check("controllerName" not in s, "ver-class in v1alpha1 has controllerName")
        else:
            e.check(s.get("controllerName") == hub["spec"].get("controllerName"),
                    "ver-class in %s: controllerName %r" % (v, s.get("controllerName")))


def check_images(env):
    """The images vmop writes (in v1alpha6): v1alpha1 holds type, OS, product and hardware
    version in spec and the display name as status.imageName."""
    name = vmi_name(env)
    cvmis = json.loads(env.kubectl("get", res("clustervirtualmachineimages", HUB),
                                   "-o", "json").stdout)["items"]
    e.check(cvmis, "no ClusterVirtualMachineImage")
    for plural, n, ns in (("virtualmachineimages", name, NS),
                          ("clustervirtualmachineimages", cvmis[0]["metadata"]["name"], None)):
        hub = get_in(env, plural, HUB, n, ns)
        hst = hub["status"]
        e.check(hst.get("name") and hst.get("type") and dig(hst, "osInfo.type") and
                hst.get("hardwareVersion"), "%s %s: hub status lacks key fields" % (plural, n))
        for v in VERSIONS:
            o = get_in(env, plural, v, n, ns)
            e.check(o, "%s %s not found through %s" % (plural, n, v))
            s, st, where = o.get("spec") or {}, o.get("status") or {}, "%s %s in %s" % (plural, n, v)
            e.check(s.get("providerRef") == hub["spec"].get("providerRef"), where + ": providerRef")
            if v == "v1alpha1":
                got = (st.get("imageName"), s.get("type"), dig(s, "osInfo.type"),
                       s.get("hwVersion"), s.get("productInfo"), st.get("contentVersion"))
                e.check("name" not in st and "hardwareVersion" not in st, where + ": hub keys")
            else:
                got = (st.get("name"), st.get("type"), dig(st, "osInfo.type"),
                       st.get("hardwareVersion"), st.get("productInfo"),
                       st.get("providerContentVersion"))
            want = (hst["name"], hst["type"], hst["osInfo"]["type"], hst["hardwareVersion"],
                    hst.get("productInfo"), hst.get("providerContentVersion"))
            e.check(got == want, "%s: %r, want %r" % (where, got, want))


def check_respolicy(env):
    spec = {"resourcepool": {"name": "ver-pool", "reservations": {"cpu": "1000m"}},
            "folder": {"name": "ver-folder"}, "clustermodules": [{"groupname": "ver-g1"},
                                                                 {"groupname": "ver-g2"}]}
    env.apply([{"apiVersion": "%s/v1alpha1" % GROUP, "kind": "VirtualMachineSetResourcePolicy",
                "metadata": {"name": "ver-rp", "namespace": NS}, "spec": spec}])
    for v in VERSIONS:
        o = get_in(env, "virtualmachinesetresourcepolicies", v, "ver-rp")
        e.check(o, "ver-rp not found through %s" % v)
        s = o.get("spec") or {}
        if v == "v1alpha1":
            e.check(s == spec, "ver-rp in v1alpha1: %r, want it as written" % s)
        else:
            e.check(s.get("resourcePool") == spec["resourcepool"] and
                    s.get("folder") == "ver-folder" and
                    s.get("clusterModuleGroups") == ["ver-g1", "ver-g2"] and
                    not {"resourcepool", "clustermodules"} & set(s),
                    "ver-rp in %s: %r" % (v, s))


def check_service(env):
    """Written in v1alpha6 with ipFamilies (v1alpha6 only); replaced through v1alpha2 with another
    port: ipFamilies kept, the port changed, and vmop's Service follows."""
    ports = [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080}]
    env.apply([{"apiVersion": "%s/%s" % (GROUP, HUB), "kind": "VirtualMachineService",
                "metadata": {"name": "ver-svc", "namespace": NS},
                "spec": {"type": "ClusterIP", "ipFamilies": ["IPv4"],
                         "ipFamilyPolicy": "SingleStack", "selector": {"ver-app": "none"},
                         "ports": ports}}])
    for v in VERSIONS:
        o = get_in(env, "virtualmachineservices", v, "ver-svc")
        e.check(o, "ver-svc not found through %s" % v)
        s = o.get("spec") or {}
        e.check(s.get("type") == "ClusterIP" and s.get("ports") == ports and
                s.get("selector") == {"ver-app": "none"}, "ver-svc in %s: %r" % (v, s))
        if v == HUB:
            e.check(s.get("ipFamilies") == ["IPv4"] and s.get("ipFamilyPolicy") == "SingleStack",
                    "ver-svc in v1alpha6 lost ipFamilies: %r" % s)
        else:
            e.check("ipFamilies" not in s and "ipFamilyPolicy" not in s,
                    "ver-svc in %s has v1alpha6's ipFamilies" % v)
    a2 = get_in(env, "virtualmachineservices", "v1alpha2", "ver-svc")
    e.check(CONV_ANN in (a2["metadata"].get("annotations") or {}),
            "ver-svc in v1alpha2 has no conversion-data annotation")
    a2["spec"]["ports"][0]["port"] = 8081
    env.kubectl("replace", "-f", "-", stdin=json.dumps(a2))
    hub = get_in(env, "virtualmachineservices", HUB, "ver-svc")
    s = hub["spec"]
    e.check(s.get("ipFamilies") == ["IPv4"] and s.get("ipFamilyPolicy") == "SingleStack",
            "ver-svc lost ipFamilies after a replace through v1alpha2: %r" % s)
    e.check(s["ports"][0]["port"] == 8081, "the v1alpha2 replace did not change the port: %r"
            % s["ports"])
    e.check(CONV_ANN not in (hub["metadata"].get("annotations") or {}),
            "the hub kept the conversion-data annotation")

    def svc_port():
        o = env.get("service", "ver-svc")
        return o if o and [p.get("port") for p in o["spec"].get("ports") or []] == [8081] else None
    e.wait_for(svc_port, "vmop's Service ver-svc on port 8081")


def check_vm_lossless(env):
    """ver-rb6, written in v1alpha6 with volumeAttributesClassName: older versions do not show
    it; a label and a merge patch through v1alpha2 keep it, and the patch takes effect."""
    for v in VERSIONS[:-1]:
        o = get_in(env, "virtualmachines", v, "ver-rb6")
        e.check("volumeAttributesClassName" not in (o.get("spec") or {}),
                "ver-rb6 in %s shows volumeAttributesClassName" % v)
        data = (o["metadata"].get("annotations") or {}).get(CONV_ANN) or ""
        e.check('"volumeAttributesClassName":"ver-vac"' in data,
                "ver-rb6 in %s: conversion-data lacks volumeAttributesClassName" % v)
    env.kubectl("label", res("virtualmachines", "v1alpha2"), "ver-rb6", "-n", NS,
                "ver.e2e/relabeled=yes")
    hub = get_in(env, "virtualmachines", HUB, "ver-rb6")
    e.check((hub["metadata"].get("labels") or {}).get("ver.e2e/relabeled") == "yes",
            "the label through v1alpha2 is missing")
    e.check(hub["spec"].get("volumeAttributesClassName") == "ver-vac",
            "volumeAttributesClassName after a label through v1alpha2: %r"
            % hub["spec"].get("volumeAttributesClassName"))
    env.kubectl("patch", res("virtualmachines", "v1alpha2"), "ver-rb6", "-n", NS, "--type=merge",
                "-p", json.dumps({"spec": {"powerState": "PoweredOff"}}))
    hub = get_in(env, "virtualmachines", HUB, "ver-rb6")
    e.check(hub["spec"].get("volumeAttributesClassName") == "ver-vac",
            "volumeAttributesClassName after a patch through v1alpha2: %r"
            % hub["spec"].get("volumeAttributesClassName"))
    e.check(hub["spec"].get("powerState") == "PoweredOff", "the v1alpha2 patch did not apply")
    for k in ("instanceUUID", "biosUUID", "image"):
        e.check(k in hub["spec"], "spec.%s lost through v1alpha2" % k)
    e.check(CONV_ANN not in (hub["metadata"].get("annotations") or {}),
            "the hub kept the conversion-data annotation")
    hub = wait_obj(env, "virtualmachines", HUB, "ver-rb6",
                   lambda o: (o.get("status") or {}).get("powerState") == "PoweredOff" and
                   dig(e.cond(o, "VirtualMachinePowerStateSynced") or {}, "message") == "poweredOff",
                   "ver-rb6 PoweredOff after the v1alpha2 patch")
    c = e.cond(hub, "VirtualMachineFieldsSupported")
    e.check(c and c.get("status") == "False" and "volumeAttributesClassName" in (c.get("message") or ""),
            "VirtualMachineFieldsSupported does not name volumeAttributesClassName: %r" % c)


def test_readback(env):
    vmi = vmi_name(env)
    vm3 = vm_manifest("v1alpha3", "ver-rb", "ver-rb-ud", vmi=vmi)
    vm6 = vm_manifest(HUB, "ver-rb6", "ver-rb-ud", vmi=vmi,
                      extra={"volumeAttributesClassName": "ver-vac"})
    try:
        env.apply([secret("ver-rb-ud"), vm3, vm6])
        hub_rb = e.wait_running(env, "ver-rb")
        e.wait_running(env, "ver-rb6")
        check_vm_all_versions(env, "ver-rb", "ver-rb-ud")
        check_columns(env, get_in(env, "virtualmachines", HUB, "ver-rb") or hub_rb)
        check_class(env)
        check_images(env)
        check_respolicy(env)
        check_service(env)
        check_vm_lossless(env)
    finally:
        delete_vms(env, ["ver-rb", "ver-rb6"])
        for kind, n in (("virtualmachineservice", "ver-svc"), ("virtualmachineclass", "ver-class"),
                        ("virtualmachinesetresourcepolicy", "ver-rp")):
            env.kubectl("delete", kind, n, "-n", NS, "--ignore-not-found", "--wait=false")
        e.wait_for(lambda: env.get("virtualmachineservice", "ver-svc") is None,
                   "ver-svc deleted")


def test_configmap(env):
    name = "ver-cm"
    vm = vm_manifest("v1alpha1", name, None)
    vm["spec"]["vmMetadata"] = {"configMapName": "ver-cm-data", "transport": "CloudInit"}
    try:
        env.apply([{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "ver-cm-data", "namespace": NS},
                    "data": {"user-data": "#cloud-config\nusers:\n- name: ver\n"}}, vm])
        c = e.wait_cond(env, name, "VirtualMachineBootstrapReady", "False", "NotSupported")
        e.check("configMapName" in (c.get("message") or ""),
                "BootstrapReady message does not name configMapName: %r" % c.get("message"))
        hub = env.get("vm", name)
        e.check((hub["metadata"].get("annotations") or {}).get(CM_ANN) == "true",
                "the hub lacks the %s annotation" % CM_ANN)
        e.check(not (hub.get("status") or {}).get("uniqueID"), "ver-cm was created in vCenter")
        e.check((e.cond(hub, "Ready") or {}).get("status") == "False", "ver-cm Ready not False")
        e.check("%s/%s" % (NS, name) not in e.count_by_namespaced_name(env),
                "a VM for ver-cm exists in vCenter")
        a1 = get_in(env, "virtualmachines", "v1alpha1", name)
        e.check(a1["spec"].get("vmMetadata") == {"configMapName": "ver-cm-data",
                                                 "transport": "CloudInit"},
                "vmMetadata read in v1alpha1: %r" % a1["spec"].get("vmMetadata"))
        e.check(CM_ANN not in (a1["metadata"].get("annotations") or {}),
                "v1alpha1 shows the internal %s annotation" % CM_ANN)
        e.check(a1.get("status", {}).get("phase") != "Created", "phase %r" % a1["status"].get("phase"))
        # as the condition advises: the data in a Secret named in vmMetadata.secretName
        env.apply([secret("ver-cm-ud")])
        env.kubectl("patch", res("virtualmachines", "v1alpha1"), name, "-n", NS, "--type=merge",
                    "-p", json.dumps({"spec": {"vmMetadata": {"configMapName": None,
                                                              "secretName": "ver-cm-ud"}}}))
        hub = e.wait_running(env, name)
        e.check(CM_ANN not in (hub["metadata"].get("annotations") or {}),
                "the hub kept %s after the switch to secretName" % CM_ANN)
        e.wait_cond(env, name, "VirtualMachineBootstrapReady", "True")
        check_vm_all_versions(env, name, "ver-cm-ud")
    finally:
        delete_vms(env, [name])


TESTS = [("versions", test_versions), ("cloudinit", test_cloudinit), ("readback", test_readback),
         ("configmap", test_configmap)]


def main():
    return e.run_main(TESTS)


if __name__ == "__main__":
    sys.exit(main())
