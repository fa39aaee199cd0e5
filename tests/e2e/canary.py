#!/usr/bin/env python3
"""canary.py: secrets stay secret (issue 11 part 7).

Every e2e and chaos script that builds its devenv through e2e_vm.Env runs with three canaries:
  - the vCenter password: tests/devenv starts the simulator requiring `vmop-canary-pw-<hex>` (a
    fresh one per directory) and puts it in the endpoint's credentials Secret;
  - the tenant user data: the bootstrap Secrets the harness makes (e2e_vm.secret_obj,
    chaoslib.secret_obj) carry a cloud-config comment `vmop-canary-ud-<hex>` (USER_DATA_CANARY,
    one per process; user_data() adds it);
  - vmop's ServiceAccount token (DIR/serviceaccount/token), whole and its JWT signature.
Any other tenant Secret (every namespace but vmop-system and kube-*) present at the end is a
canary too: the printable runs of 16 or more characters of its values, plain or decoded.
Before devenv down the harness scans every Event (all namespaces, the whole object) and the status,
annotations and labels of every object of vmop's CRDs (both API groups, all namespaces); after
devenv down, every line of every operator log (DIR/operator*.log). Each canary is looked for as
is, in standard and URL-safe base64 at any alignment, inside any base64 run that decodes (gzip
inflated, two levels deep), and JSON-unescaped. A finding names the canary and where ("vCenter
password in operator.log line 1234") and never the secret; an empty operator log is a finding
too (nothing was scanned).

`canary.py --self-test` (a unit test) feeds the scanner planted leaks of every form and checks
each is reported without the secret, and that clean input reports nothing.
"""
import base64
import binascii
import glob
import gzip
import json
import os
import re
import secrets
import sys
import zlib

USER_DATA_CANARY = "vmop-canary-ud-" + secrets.token_hex(12)
GROUPS = ("vmoperator.vmware.com", "infra.vmop.io")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
MIN_PART = 16  # a tenant Secret's text shorter than this is not distinctive enough to look for


def user_data(body="#cloud-config\n"):
    """A tenant cloud-config carrying the user-data canary as a comment line."""
    if not body.endswith("\n"):
        body += "\n"
    return body + "# %s\n" % USER_DATA_CANARY


def b64_needles(s):
    """The parts of base64(x + s + y) that depend on s alone, for each of the three alignments
    of s in x (standard and URL-safe alphabets): a leak of s inside any base64 text contains
    one of them."""
    b = s.encode()
    out = set()
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + b).decode()
        start = 4 if k else 0
        end = 4 * ((k + len(b)) // 3)
        mid = enc[start:end]
        if len(mid) >= 12:
            out.add(mid)
            out.add(mid.replace("+", "-").replace("/", "_"))
    return out


class Canary:
    """label names it in findings; values: the texts that must not show (one, or the distinctive
    parts of a tenant Secret); needles: what is looked for in a text (values, base64 forms)."""

    def __init__(self, label, value, encoded=True):
        self.label = label
        self.values = [value] if isinstance(value, str) else list(value)
        self.needles = set(self.values)
        if encoded:
            for v in self.values:
                self.needles |= b64_needles(v)


def canaries_of(d, ud=USER_DATA_CANARY):
    """The canaries of devenv directory d: the vCenter password from DIR/vcenter.json, the
    user-data canary, the ServiceAccount token from DIR/serviceaccount/token."""
    out = []
    try:
        with open(os.path.join(d, "vcenter.json")) as f:
            pw = json.load(f).get("password") or ""
        if pw:
            out.append(Canary("vCenter password", pw))
    except (OSError, ValueError):
        pass
    if ud:
        out.append(Canary("tenant user data", ud))
    try:
        with open(os.path.join(d, "serviceaccount/token")) as f:
            tok = f.read().strip()
        if tok:
            out.append(Canary("ServiceAccount token", tok, encoded=False))
            sig = tok.split(".")[-1]
            if tok.count(".") == 2 and len(sig) >= 16:
                out.append(Canary("ServiceAccount token signature", sig, encoded=False))
    except OSError:
        pass
    return out


PRINTABLE_RUN = re.compile(r"[\x20-\x7e]{%d,}" % MIN_PART)


def secret_canaries(items):
    """A canary per tenant Secret (every namespace but vmop-system and kube-*): the printable
    runs of MIN_PART characters or more of each value (a cloud-config's longer lines, a
    binary value's text), of the value as given and as decoded (base64, gzip). Catches user
    data the harness did not mark, e.g. bad input of tests/chaos/badinput.py."""
    out = []
    for sec in items:
        md = sec.get("metadata") or {}
        ns = md.get("namespace") or ""
        if ns == "vmop-system" or ns.startswith("kube-"):
            continue
        parts = set()
        for v in (sec.get("data") or {}).values():
            try:
                raw = base64.b64decode(v).decode("latin-1")
            except (binascii.Error, ValueError):
                continue
            for t in [raw] + list(_decoded(raw)):
                parts |= {m.group(0).strip() for m in PRINTABLE_RUN.finditer(t)}
        parts = {p for p in parts if len(p) >= MIN_PART}
        if parts:
            out.append(Canary("user data of Secret %s/%s" % (ns, md.get("name")), sorted(parts)))
    return out


def _decoded(text, depth=2):
    """The texts the base64 runs in text decode to (gzip inflated), recursively; each run from
    each of its first four characters, as a run may begin before the encoded text does."""
    if depth == 0:
        return
    for m in B64_RUN.finditer(text):
        run = m.group(0).rstrip("=")
        if "-" in run or "_" in run:
            run = run.replace("-", "+").replace("_", "/")
        for off in range(4):
            part = run[off:]
            part = part[:len(part) - len(part) % 4] if len(part) % 4 == 1 else part
            try:
                raw = base64.b64decode(part + "=" * (-len(part) % 4), validate=True)
            except (binascii.Error, ValueError):
                continue
            if raw[:2] == b"\x1f\x8b":
                try:
                    raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, 1 << 22)
                except zlib.error:
                    continue
            t = raw.decode("latin-1")
            yield t
            yield from _decoded(t, depth - 1)


class Scanner:
    """Collects findings ("<canary> in <where>"), never a canary's value."""

    def __init__(self, canaries):
        self.canaries = canaries
        self.findings = []
        self.counts = {}

    def _hits(self, text):
        texts = [text]
        if "\\" in text:  # JSON-escaped (a log line's strings): "\/" for "/", "\n", ...
            texts.append(text.replace("\\/", "/").replace("\\n", "\n").replace('\\"', '"'))
        hit = []
        for c in self.canaries:
            if any(n in t for t in texts for n in c.needles):
                hit.append(c.label)
        if len(hit) < len(self.canaries) and B64_RUN.search(texts[-1]):
            for t in _decoded(texts[-1]):
                for c in self.canaries:
                    if c.label not in hit and any(v in t for v in c.values):
                        hit.append(c.label)
        return hit

    def text(self, text, where):
        for label in self._hits(text):
            f = "%s in %s" % (label, where)
            if f not in self.findings[-4:]:  # one per canary and place (an object's strings)
                self.findings.append(f)

    def obj(self, o, where):
        """Every string (keys too) of a decoded JSON value."""
        if isinstance(o, dict):
            for k, v in o.items():
                self.text(str(k), where)
                self.obj(v, where)
        elif isinstance(o, list):
            for v in o:
                self.obj(v, where)
        elif isinstance(o, str):
            self.text(o, where)

    def log_file(self, path):
        n = 0
        name = os.path.basename(path)
        with open(path, "rb") as f:
            for i, raw in enumerate(f, 1):
                n += 1
                self.text(raw.decode("utf-8", "replace"), "%s line %d" % (name, i))
        return n

    def logs(self, d):
        """Every line of DIR/operator*.log (devenv's operator and any replica a test started)."""
        total = 0
        for p in sorted(glob.glob(os.path.join(d, "operator*.log"))):
            total += self.log_file(p)
        self.counts["operator log lines"] = total
        if total == 0:
            self.findings.append("no operator log lines to scan in %s" % d)
        return total

    def events(self, items):
        for ev in items:
            md = ev.get("metadata") or {}
            self.obj(ev, "Event %s/%s" % (md.get("namespace"), md.get("name")))
        self.counts["events"] = len(items)

    def statuses(self, items):
        for o in items:
            md = o.get("metadata") or {}
            what = "%s %s%s" % (o.get("kind"), md.get("namespace") + "/" if md.get("namespace")
                                else "", md.get("name"))
            self.obj(o.get("status") or {}, "status of " + what)
            ann = {k: v for k, v in (md.get("annotations") or {}).items() if k != LAST_APPLIED}
            self.obj(ann, "annotations of " + what)
            self.obj(md.get("labels") or {}, "labels of " + what)
        self.counts["objects"] = len(items)

    def summary(self):
        return ", ".join("%d %s" % (v, k) for k, v in self.counts.items())


def scan_cluster(sc, kubectl):
    """Adds the tenant Secrets' canaries, then scans Events and vmop's objects, through
    kubectl(*args) -> CompletedProcess (the admin's)."""
    p = kubectl("get", "secrets", "-A", "-o", "json", check=False)
    if p.returncode != 0:
        sc.findings.append("could not list Secrets: %s" % p.stderr.strip()[-200:])
    else:
        extra = secret_canaries(json.loads(p.stdout).get("items") or [])
        sc.canaries.extend(extra)
        sc.counts["tenant Secrets"] = len(extra)
    p = kubectl("get", "events", "-A", "-o", "json", check=False)
    if p.returncode != 0:
        sc.findings.append("could not list events: %s" % p.stderr.strip()[-200:])
    else:
        sc.events(json.loads(p.stdout).get("items") or [])
    p = kubectl("get", "crd", "-o", "json", check=False)
    if p.returncode != 0:
        sc.findings.append("could not list CRDs: %s" % p.stderr.strip()[-200:])
        return
    kinds = sorted("%s.%s" % (c["spec"]["names"]["plural"], c["spec"]["group"])
                   for c in json.loads(p.stdout).get("items") or []
                   if c["spec"]["group"] in GROUPS)
    if not kinds:
        sc.findings.append("no CRDs of %s installed" % " or ".join(GROUPS))
        return
    p = kubectl("get", ",".join(kinds), "-A", "-o", "json", check=False)
    if p.returncode != 0:
        sc.findings.append("could not list %s: %s" % (",".join(kinds), p.stderr.strip()[-200:]))
        return
    sc.statuses(json.loads(p.stdout).get("items") or [])
    sc.counts["kinds"] = len(kinds)


# ---- self-test ------------------------------------------------------------------------------

def self_test():
    import tempfile
    failures = []

    def expect(cond, msg):
        if not cond:
            failures.append(msg)

    d = tempfile.mkdtemp(prefix="vmop-canary-selftest.")
    pw = "vmop-canary-pw-" + secrets.token_hex(12)
    head = base64.urlsafe_b64encode(b'{"alg":"RS256"}').decode().rstrip("=")
    sig = base64.urlsafe_b64encode(secrets.token_bytes(64)).decode().rstrip("=")
    tok = "%s.%s.%s" % (head, base64.urlsafe_b64encode(b'{"sub":"x"}').decode().rstrip("="), sig)
    os.makedirs(os.path.join(d, "serviceaccount"))
    with open(os.path.join(d, "vcenter.json"), "w") as f:
        json.dump({"password": pw, "username": "u"}, f)
    with open(os.path.join(d, "serviceaccount/token"), "w") as f:
        f.write(tok)
    ud = user_data("#cloud-config\nusers:\n- name: selftest\n")
    cans = canaries_of(d)
    labels = sorted(c.label for c in cans)
    expect(labels == ["ServiceAccount token", "ServiceAccount token signature",
                      "tenant user data", "vCenter password"], "canaries %r" % labels)

    clean = ['{"level":"info","msg":"reconciled","vm":"default/e2e-be"}',
             '{"level":"info","msg":"login","user":"administrator@vsphere.local"}',
             '{"msg":"%s"}' % base64.b64encode(b"#cloud-config\nusers: []\n").decode()]
    leaks = [
        ("vCenter password", '{"msg":"login failed","password":"%s"}' % pw),
        ("vCenter password", '{"msg":"auth %s"}' % base64.b64encode(b"u:" + pw.encode()).decode()),
        ("vCenter password", '{"msg":"x%s"}' % base64.b64encode(b"ab" + pw.encode()).decode()),
        ("tenant user data", '{"msg":"bad user data","data":%s}' % json.dumps(ud)),
        ("tenant user data", '{"guestinfo.userdata":"%s"}' % base64.b64encode(
            gzip.compress(ud.encode())).decode()),
        ("tenant user data", '{"v":"%s"}' % base64.b64encode(base64.b64encode(
            gzip.compress(ud.encode()))).decode().replace("/", "\\/")),
        ("tenant user data", '{"v":"%s"}' % base64.b64encode(ud.encode()).decode()),
        ("ServiceAccount token", '{"msg":"GET /api","Authorization":"Bearer %s"}' % tok),
        ("ServiceAccount token signature", '{"msg":"sig %s"}' % sig),
    ]
    lines = clean + [ln for _, ln in leaks]
    with open(os.path.join(d, "operator.log"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sc = Scanner(cans)
    n = sc.logs(d)
    expect(n == len(lines), "scanned %d lines, want %d" % (n, len(lines)))
    for i, (label, _) in enumerate(leaks, len(clean) + 1):
        where = "operator.log line %d" % i
        expect(any(f.startswith(label) and f.endswith(where) for f in sc.findings),
               "%s not reported at %s" % (label, where))
    for i in range(1, len(clean) + 1):
        expect(not any(f.endswith("operator.log line %d" % i) for f in sc.findings),
               "clean line %d reported" % i)
    for f in sc.findings:
        for c in cans:
            expect(not any(nd in f for nd in c.needles), "a finding shows the %s" % c.label)

    sc = Scanner(cans)
    sc.events([{"metadata": {"namespace": "default", "name": "e1"}, "reason": "Created",
                "message": "created vm-1"},
               {"metadata": {"namespace": "default", "name": "e2"}, "reason": "Invalid",
                "note": "user data %s" % USER_DATA_CANARY}])
    sc.statuses([{"kind": "VCenterEndpoint", "metadata": {"name": "vc"},
                  "status": {"conditions": [{"message": "cannot log in as u/%s" % pw}]}},
                 {"kind": "VirtualMachine", "metadata": {"namespace": "default", "name": "vm",
                                                         "annotations": {LAST_APPLIED: pw}},
                  "status": {"powerState": "PoweredOn"}}])
    expect(sc.findings == ["tenant user data in Event default/e2"] + [
        "vCenter password in status of VCenterEndpoint vc"], "findings %r" % sc.findings)

    # tenant Secrets the harness did not mark: their distinctive text, given plain, as binary with
    # text in it, or as gzip+base64; vmop-system's and short values are not canaries
    mark = "bad-input-marker-" + secrets.token_hex(4)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    sec = [{"metadata": {"namespace": "default", "name": "plain"},
            "data": {"user-data": b64(("#cloud-config\n# %s\n" % mark).encode())}},
           {"metadata": {"namespace": "other", "name": "badgz"},
            "data": {"user-data": b64(b"\x1f\x8b\x08\x00" + mark.encode() * 2)}},
           {"metadata": {"namespace": "default", "name": "gz"},
            "data": {"user-data": b64(b64(gzip.compress(b"#cloud-config\nruncmd: [echo gz-%s]\n"
                                                        % mark.encode())).encode())}},
           {"metadata": {"namespace": "default", "name": "short"},
            "data": {"k": b64(b"users: []")}},
           {"metadata": {"namespace": "vmop-system", "name": "creds"},
            "data": {"username": b64(b"administrator@vsphere.local")}}]
    extra = secret_canaries(sec)
    expect(sorted(c.label for c in extra) == ["user data of Secret default/gz",
                                               "user data of Secret default/plain",
                                               "user data of Secret other/badgz"],
           "Secret canaries %r" % [c.label for c in extra])
    sc = Scanner(cans + extra)
    sc.text('{"msg":"bad cloud-config: # %s"}' % mark, "l1")
    sc.text('{"msg":"gzip: %s"}' % (mark * 2), "l2")
    sc.text('{"msg":"runcmd: [echo gz-%s]"}' % mark, "l3")
    sc.text('{"msg":"users: [] administrator@vsphere.local"}', "l4")
    expect(sc.findings == ["user data of Secret default/plain in l1",
                           "user data of Secret other/badgz in l2",
                           "user data of Secret default/gz in l3"], "findings %r" % sc.findings)

    os.remove(os.path.join(d, "operator.log"))
    sc = Scanner(cans)
    sc.logs(d)
    expect(any(f.startswith("no operator log lines") for f in sc.findings),
           "an empty operator log is not reported")
    for p in glob.glob(os.path.join(d, "*")) + glob.glob(os.path.join(d, "*/*")):
        if os.path.isfile(p):
            os.remove(p)
    os.rmdir(os.path.join(d, "serviceaccount"))
    os.rmdir(d)
    for f in failures:
        print("FAIL " + f)
    print("canary self-test: %d checks failed" % len(failures) if failures else
          "canary self-test: all passed (%d leaks found, %d clean lines clean)" % (
              len(leaks), len(clean)))
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print("usage: canary.py --self-test", file=sys.stderr)
    sys.exit(2)
