#!/usr/bin/env python3
"""e2e_rbac.py: the shipped RBAC on the real kube-apiserver, with the three identities of
tests/devenv (cluster admin, the tenant, vmop's ServiceAccount token).

  rules       manifests/rbac gives the operator no wildcard verb, resource or API group
  tenant      a `kubectl auth can-i` matrix for user "tenant" (only vmop-tenant-edit, bound in
              `default`): VirtualMachines and VirtualMachineServices yes, classes and images read,
              no vCenter credentials, no admin kinds, no /status, nothing in another namespace;
              then the same for real: a VM created, patched and deleted as the tenant, and
              Forbidden answers for the rest
  operator    the matrix for vmop's ServiceAccount: everything it does, nothing more (no Secret
              writes, no namespaces, no RBAC, no VM creation)
  works       vmop, running in-cluster with that token, makes a VM Ready and its log has no
              Forbidden answer
  kustomize   `kubectl apply -k manifests/no-cert-manager --dry-run=server` is accepted by the real server
  webhook     the base's webhooks and CRD conversion render, name only paths vmop serves,
              and all but cert-manager's kinds pass a server dry run
Usage: e2e_rbac.py BUILD_DIR [TEST...]. Prints no token.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as e  # noqa: E402
from e2e_vm import NS, check  # noqa: E402

ROOT = e.ROOT


def can_i(env, kubeconfig, verb, resource, ns=NS, subresource=None):
    args = ["auth", "can-i", verb, resource, "--kubeconfig", os.path.join(env.dir, kubeconfig)]
    args += ["-n", ns] if ns else ["--all-namespaces"]
    if subresource:
        args += ["--subresource", subresource]
    p = env.kubectl(*args, check=False)
    ans = p.stdout.strip()
    check(ans in ("yes", "no"), "kubectl auth can-i %s %s: %r %r" % (verb, resource, ans,
                                                                   p.stderr.strip()[-200:]))
    return ans == "yes"


def matrix(env, kubeconfig, rows):
    """rows: (want, verb, resource, ns, subresource); every mismatch is reported at once."""
    bad = []
    for want, verb, res, ns, sub in rows:
        got = can_i(env, kubeconfig, verb, res, ns, sub)
        if got != want:
            bad.append("%s %s%s -n %s: %s, want %s" % (verb, res, "/" + sub if sub else "", ns,
                                                       "yes" if got else "no",
                                                       "yes" if want else "no"))
    check(not bad, "%s: %s" % (kubeconfig, "; ".join(bad)))


VMOP = "vmoperator.vmware.com"
INFRA = "infra.vmop.io"


def test_rules(env):
    import yaml
    bad = []
    for f in ("operator-clusterrole.yaml",):
        for doc in yaml.safe_load_all(open(os.path.join(ROOT, "manifests/rbac", f))):
            if not doc or doc.get("kind") not in ("ClusterRole", "Role"):
                continue
            for r in doc.get("rules") or []:
                for key in ("verbs", "resources", "apiGroups"):
                    if "*" in (r.get(key) or []):
                        bad.append("%s %s: %s has *" % (f, doc["metadata"]["name"], key))
    check(not bad, "; ".join(bad))


def test_tenant(env):
    Y, N = True, False
    rows = [
        (Y, "create", "virtualmachines." + VMOP, NS, None),
        (Y, "patch", "virtualmachines." + VMOP, NS, None),
        (Y, "delete", "virtualmachines." + VMOP, NS, None),
        (Y, "create", "virtualmachineservices." + VMOP, NS, None),
        (Y, "patch", "virtualmachineservices." + VMOP, NS, None),
        (Y, "delete", "virtualmachineservices." + VMOP, NS, None),
        (Y, "list", "virtualmachineclasses." + VMOP, NS, None),
        (Y, "get", "virtualmachineimages." + VMOP, NS, None),
        (Y, "list", "clustervirtualmachineimages." + VMOP, NS, None),
        (Y, "create", "secrets", NS, None),  # bootstrap data
        (N, "create", "virtualmachineclasses." + VMOP, NS, None),
        (N, "create", "virtualmachineimages." + VMOP, NS, None),
        (N, "get", "secrets", "vmop-system", None),
        (N, "list", "secrets", "vmop-system", None),
        (N, "get", "vcenterendpoints." + INFRA, None, None),
        (N, "create", "vcenterendpoints." + INFRA, None, None),
        (N, "get", "namespacebindings." + INFRA, NS, None),
        (N, "update", "namespacebindings." + INFRA, NS, None),
        (N, "patch", "virtualmachines." + VMOP, NS, "status"),
        (N, "update", "virtualmachines." + VMOP, NS, "status"),
        (N, "patch", "virtualmachineservices." + VMOP, NS, "status"),
        (N, "create", "virtualmachines." + VMOP, "vmop-system", None),
        (N, "list", "virtualmachines." + VMOP, "kube-system", None),
        (N, "create", "namespaces", None, None),
    ]
    matrix(env, "tenant-kubeconfig", rows)

    # the same for real, as the tenant
    tk = os.path.join(env.dir, "tenant-kubeconfig")
    vm = e.vm_obj("rbac-tenant-vm", extra={"powerState": "PoweredOff"})
    env.kubectl("--kubeconfig", tk, "apply", "-f", "-", stdin=json.dumps(vm))
    env.kubectl("--kubeconfig", tk, "patch", "vm", "rbac-tenant-vm", "-n", NS, "--type=merge",
                "-p", json.dumps({"metadata": {"labels": {"team": "a"}}}))
    for args in (["get", "secret", "vcsim-credentials", "-n", "vmop-system"],
                 ["get", "vcenterendpoints"],
                 ["get", "namespacebindings", "-n", NS],
                 ["patch", "vm", "rbac-tenant-vm", "-n", NS, "--subresource=status",
                  "--type=merge", "-p", '{"status":{"powerState":"PoweredOn"}}'],
                 ["get", "vm", "-n", "vmop-system"]):
        p = env.kubectl("--kubeconfig", tk, *args, check=False)
        check(p.returncode != 0 and "forbidden" in p.stderr.lower(),
              "tenant: kubectl %s was not forbidden: %r" % (" ".join(args[:3]),
                                                           p.stderr.strip()[-200:]))
    env.kubectl("--kubeconfig", tk, "delete", "vm", "rbac-tenant-vm", "-n", NS, "--wait=false")


def test_operator(env):
    Y, N = True, False
    rows = [
        (Y, "watch", "virtualmachines." + VMOP, None, None),
        (Y, "patch", "virtualmachines." + VMOP, NS, None),
        (Y, "patch", "virtualmachines." + VMOP, NS, "status"),
        (Y, "patch", "virtualmachineservices." + VMOP, NS, "status"),
        (Y, "list", "virtualmachineclasses." + VMOP, None, None),
        (Y, "create", "virtualmachineimages." + VMOP, NS, None),
        (Y, "create", "clustervirtualmachineimages." + VMOP, None, None),
        (Y, "watch", "vcenterendpoints." + INFRA, None, None),
        (Y, "watch", "namespacebindings." + INFRA, None, None),
        (Y, "get", "secrets", "vmop-system", None),
        (Y, "watch", "storageclasses.storage.k8s.io", None, None),
        (Y, "create", "services", NS, None),
        (Y, "create", "endpoints", NS, None),
        (Y, "create", "endpointslices.discovery.k8s.io", NS, None),
        (Y, "create", "events", NS, None),
        (Y, "update", "leases.coordination.k8s.io", "vmop-system", None),
        (N, "create", "virtualmachines." + VMOP, NS, None),
        (N, "delete", "virtualmachines." + VMOP, NS, None),
        (N, "delete", "virtualmachineclasses." + VMOP, NS, None),
        (N, "create", "secrets", "vmop-system", None),
        (N, "update", "secrets", NS, None),
        (N, "create", "vcenterendpoints." + INFRA, None, None),
        (N, "update", "namespacebindings." + INFRA, NS, None),
        (N, "create", "leases.coordination.k8s.io", "kube-system", None),
        (N, "delete", "namespaces", None, None),
        (N, "create", "clusterrolebindings.rbac.authorization.k8s.io", None, None),
        (N, "create", "pods", NS, None),
        (N, "*", "*", None, None),
    ]
    matrix(env, "operator-kubeconfig", rows)


def test_works(env):
    name = "rbac-works"
    env.apply([e.vm_obj(name)])
    e.wait_running(env, name, e.WAIT)
    log = open(os.path.join(env.dir, "operator.log"), errors="replace").read()
    check("forbidden" not in log.lower(),
          "the operator was refused something: %s" %
          [ln[:200] for ln in log.splitlines() if "orbidden" in ln][:3])
    e.delete_and_wait(env, name)


def test_kustomize(env):
    """The base without cert-manager (no cert-manager here) is accepted by the real server."""
    p = env.kubectl("apply", "-k", os.path.join(ROOT, "manifests/no-cert-manager"), "--dry-run=server",
                    check=False)
    check(p.returncode == 0, "kubectl apply -k manifests/no-cert-manager --dry-run=server: %s" %
          p.stderr.strip()[-400:])
    check("(server dry run)" in p.stdout, "no server dry run in %r" % p.stdout[-200:])


def test_webhook_component(env):
    """The base's webhooks (Components webhook/ and cert-manager/): it renders, every path it
    registers (admission and the CRDs' conversion) is one vmop serves, vmoperator kinds are
    registered at the hub v1alpha6 with matchPolicy Equivalent, every CA comes from cert-manager's
    injector, the CRDs serve v1alpha1..v1alpha6 with v1alpha6 the one storage version, the
    Deployment serves :9443 with the certificate cert-manager writes, and the real server accepts
    all of it but cert-manager's own kinds (server dry run; no cert-manager here)."""
    import yaml
    p = env.kubectl("kustomize", os.path.join(ROOT, "manifests"), check=False)
    check(p.returncode == 0, "kubectl kustomize manifests: %s" % p.stderr.strip()[-300:])
    docs = [d for d in yaml.safe_load_all(p.stdout) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    served = (open(os.path.join(ROOT, "operator/admission/adm_vm.h")).read() +
              open(os.path.join(ROOT, "operator/admission/adm_convert.h")).read()).replace("\\\n    ", "")
    inject = "vmop-system/vmop-webhook-cert"
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        check(len(by_kind.get(kind, [])) == 1, "%d %s" % (len(by_kind.get(kind, [])), kind))
        cfg = by_kind[kind][0]
        check(cfg["metadata"]["annotations"].get("cert-manager.io/inject-ca-from") == inject,
              "%s: no CA injection" % kind)
        for w in cfg["webhooks"]:
            path = w["clientConfig"]["service"]["path"]
            check('"%s"' % path in served, "%s path %s is not one vmop serves" % (kind, path))
            check(w["failurePolicy"] == "Fail" and w["sideEffects"] == "None",
                  "%s: failurePolicy %r" % (w["name"], w["failurePolicy"]))
            for r in w["rules"]:
                if "vmoperator.vmware.com" in r["apiGroups"]:
                    # VirtualMachine's at every served version (vmop converts in-process), the
                    # other kinds' at the hub, the API server converting
                    want = (["v1alpha%d" % i for i in range(1, 7)]
                            if r["resources"] == ["virtualmachines"] else ["v1alpha6"])
                    check(r["apiVersions"] == want and w.get("matchPolicy") == "Equivalent",
                          "%s: %r, matchPolicy %r" % (w["name"], r["apiVersions"], w.get("matchPolicy")))
    crds = [d for d in by_kind["CustomResourceDefinition"] if d["spec"]["group"] == "vmoperator.vmware.com"]
    check(len(crds) == 6, "%d vmoperator CRDs" % len(crds))
    for c in crds:
        name = c["metadata"]["name"]
        vers = [v["name"] for v in c["spec"]["versions"]]
        check(vers == ["v1alpha%d" % i for i in range(1, 7)], "%s serves %r" % (name, vers))
        check([v["name"] for v in c["spec"]["versions"] if v["storage"]] == ["v1alpha6"],
              "%s: storage %r" % (name, [v["name"] for v in c["spec"]["versions"] if v["storage"]]))
        conv = c["spec"].get("conversion", {})
        svc = conv.get("webhook", {}).get("clientConfig", {}).get("service", {})
        check(conv.get("strategy") == "Webhook" and svc.get("name") == "vmop-webhook" and
              '"%s"' % svc.get("path") in served, "%s: conversion %r" % (name, conv))
        check(c["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from") == inject,
              "%s: no CA injection" % name)
    dep = by_kind["Deployment"][0]["spec"]["template"]["spec"]
    args = dep["containers"][0]["args"]
    check("--webhook-addr=:9443" in args, "Deployment args %r" % args)
    secret = [v["secret"]["secretName"] for v in dep["volumes"] if "secret" in v]
    cert = by_kind["Certificate"][0]["spec"]["secretName"]
    check(secret == [cert], "Deployment mounts %r, cert-manager writes %r" % (secret, cert))
    rest = [d for d in docs if not d["apiVersion"].startswith("cert-manager.io/")]
    p = env.kubectl("apply", "--dry-run=server", "-f", "-", check=False,
                    stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": rest}))
    check(p.returncode == 0 and "(server dry run)" in p.stdout,
          "server dry run of the base: %s" % p.stderr.strip()[-400:])


TESTS = [("rules", test_rules), ("tenant", test_tenant), ("operator", test_operator),
         ("works", test_works), ("kustomize", test_kustomize),
         ("webhook", test_webhook_component)]

if __name__ == "__main__":
    sys.exit(e.run_main(TESTS))
