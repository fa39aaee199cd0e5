#!/usr/bin/env python3
"""ha.py: two vmop replicas with --leader-elect on one Lease (tests/devenv + kubectl + vimc).

Each replica talks to the API server through its own loopback TCP proxy (TLS passes through
untouched), so the test can cut one replica off the API server while it keeps running and keeps
its vCenter connection: a real partition.
ha.py BUILD_DIR (the default suite):
  single     only the leader reconciles: vmop_leader 1/0, the follower's reconcile counter stays 0
             and its log has no reconcile lines.
  failover   SIGKILL the leader: the other becomes leader within the lease duration (15 s) plus
             two jittered retry periods; VMs created meanwhile converge.
  sigstop    SIGSTOP the leader: the other takes over only after the lease expired; on SIGCONT
             the old one stops without reconciling anything.
ha.py BUILD_DIR partition:
  closed     cut the leader off the API server (connections closed): it stops leading (renew
             deadline 10 s, the process exits) BEFORE the new leader starts (lease 15 s), by the
             log timestamps, and does no reconcile work after that.
  black hole the leader's API traffic is black-holed (connections stay open and silent, a
             partition that drops packets): the same must hold.
The lease timings are kube_lease.h's defaults (15 s / 10 s / 2 s); vmop has no flags for them.
"""
import datetime
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaoslib as cl  # noqa: E402
from chaoslib import NS, check  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(cl.ROOT, "build-dev")
LEASE_S, RENEW_S, RETRY_S = 15.0, 10.0, 2.0
# reconcile work in the log: what only an acting leader writes
# a log line's "msg" that shows reconcile work (matched against the parsed message, not the JSON
# text: json.dumps puts a space after the colon)
ACTING = re.compile(r'^(created |done: |deleted from vCenter|wrote defaults)')


def acting(j):
    return bool(ACTING.search(str(j.get("msg", ""))))


def log(msg):
    print("  [%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def pump(a, b, stop=lambda: False, hold=lambda: False, tick=1.0):
    """Bytes both ways between two sockets until either side closes or stop() is true; while
    hold() is true nothing moves and nothing closes (a partition that drops packets)."""
    try:
        while not stop():
            if hold():
                time.sleep(tick)
                continue
            r, _, _ = select.select([a, b], [], [], tick)
            for x in r:
                d = x.recv(65536)
                if not d:
                    return
                (b if x is a else a).sendall(d)
    except OSError:
        pass
    finally:
        a.close()
        b.close()


class Proxy(threading.Thread):
    """127.0.0.1:0 -> 127.0.0.1:target, byte for byte; cut() closes everything and refuses."""

    def __init__(self, target):
        super().__init__(daemon=True)
        self.target = target
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]
        self.cut_ev = threading.Event()
        self.hole_ev = threading.Event()
        self.socks = []
        self.lock = threading.Lock()

    def run(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            if self.hole_ev.is_set():  # black hole: accept, never answer, never close
                with self.lock:
                    self.socks.append(c)
                continue
            if self.cut_ev.is_set():
                c.close()
                continue
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.socks += [c, u]
            threading.Thread(target=self.pump, args=(c, u), daemon=True).start()

    def pump(self, a, b):
        pump(a, b, stop=self.cut_ev.is_set, hold=self.hole_ev.is_set, tick=0.2)

    def cut(self):
        self.cut_ev.set()
        with self.lock:
            for s in self.socks:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def blackhole(self):
        """A partition that drops packets: connections stay open and silent."""
        self.hole_ev.set()

    def close(self):
        self.hole_ev.clear()
        self.cut()
        self.ls.close()


class WebhookService(threading.Thread):
    """What the vmop-webhook Service is in a cluster: the address the API server calls for the
    conversion and admission webhooks (127.0.0.1:DIR/webhook.port, where devenv's single vmop
    listened) spread over every live replica's own webhook port. Webhooks are not leader-only:
    while one replica is down the others answer, so requests in v1alpha5 keep converting."""

    def __init__(self, env):
        super().__init__(daemon=True)
        self.replicas = []
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        port = int(open(os.path.join(env.dir, "webhook.port")).read())
        cl.wait_for(lambda: self.try_bind(port), "webhook port %d free" % port, timeout=10)
        self.ls.listen(64)
        self.turn = 0
        self.start()

    def try_bind(self, port):
        try:
            self.ls.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False

    def run(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            live = [r for r in self.replicas if r.p.poll() is None]
            self.turn += 1
            u = None
            for i in range(len(live)):
                r = live[(self.turn + i) % len(live)]
                try:
                    u = socket.create_connection(("127.0.0.1", r.webhook), timeout=2)
                    break
                except OSError:
                    continue
            if u is None:
                c.close()
                continue
            threading.Thread(target=pump, args=(c, u), daemon=True).start()

    def close(self):
        self.ls.close()


SERVICE = None  # the WebhookService of the running test


class Replica:
    def __init__(self, env, name):
        self.env, self.name = env, name
        self.proxy = Proxy(env.api_port)
        self.proxy.start()
        kc = open(os.path.join(env.dir, "operator-kubeconfig")).read()  # vmop's own token
        kc = kc.replace("127.0.0.1:%d" % env.api_port, "127.0.0.1:%d" % self.proxy.port)
        self.kubeconfig = os.path.join(env.dir, "kubeconfig-" + name)
        with open(os.open(self.kubeconfig, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(kc)
        self.health = int(subprocess.check_output(
            ["python3", "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); "
             "print(s.getsockname()[1])"]).decode())
        args = open(os.path.join(env.dir, "operator.args")).read().split()
        i = args.index("--health-addr")
        args[i + 1] = "127.0.0.1:%d" % self.health
        self.webhook = int(subprocess.check_output(
            ["python3", "-c", "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); "
             "print(s.getsockname()[1])"]).decode())
        if "--webhook-addr" in args:  # each replica serves the webhooks on a port of its own
            args[args.index("--webhook-addr") + 1] = "127.0.0.1:%d" % self.webhook
        self.logpath = os.path.join(env.dir, "operator-%s.log" % name)
        self.logf = open(self.logpath, "ab")
        self.p = subprocess.Popen([os.path.join(BUILD, "operator/vmop"), "--kubeconfig",
                                   self.kubeconfig, "--leader-elect"] + args,
                                  stdin=subprocess.DEVNULL, stdout=self.logf, stderr=self.logf,
                                  start_new_session=True)
        env.extra.append(self.p)
        if SERVICE:
            SERVICE.replicas.append(self)

    def lines(self):
        out = []
        for ln in open(self.logpath, errors="replace"):
            try:
                out.append(json.loads(ln))
            except ValueError:
                pass
        return out

    def first(self, pattern):
        """ts (epoch seconds) of the first log line whose msg matches, else None."""
        for j in self.lines():
            if re.search(pattern, j.get("msg", "")):
                return ts(j)
        return None

    def metrics(self):
        return cl.scrape(self.health)

    def stop(self):
        cl.stop_proc(self.p)
        self.proxy.close()


def ts(j):
    return datetime.datetime.strptime(j["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def leader_of(reps):
    live = [r for r in reps if r.p.poll() is None]
    lead = [r for r in live if r.metrics().get("vmop_leader") == 1]
    return lead[0] if len(lead) == 1 else None


def wait_leader(reps, timeout=40):
    return cl.wait_for(lambda: leader_of(reps), "a single leader", timeout=timeout)


def create(env, names):
    env.apply([cl.secret_obj("ha-cc")])
    for n in names:
        env.kubectl_retry("apply", "-f", "-", stdin=json.dumps(cl.vm_obj(n, secret="ha-cc")))


def test_ha(env):
    # the single-replica operator of devenv went away (with_service); two electing replicas come
    a, b = Replica(env, "a"), Replica(env, "b")
    reps = [a, b]
    lead = wait_leader(reps)
    fol = b if lead is a else a
    log("leader %s, follower %s" % (lead.name, fol.name))

    # --- only the leader reconciles
    create(env, ["ha-0", "ha-1", "ha-2"])
    cl.wait_converged(env, ["ha-0", "ha-1", "ha-2"])
    ml, mf = lead.metrics(), fol.metrics()
    check(cl.reconciles(ml) > 0, "the leader counted no reconciles")
    check(mf.get("vmop_leader") == 0 and cl.reconciles(mf) == 0,
          "the follower reconciled: leader=%s reconciles=%s" %
          (mf.get("vmop_leader"), cl.reconciles(mf)))
    check(not any(acting(j) for j in fol.lines()),
          "the follower's log shows reconcile work")
    log("single: leader reconciles=%d, follower 0" % cl.reconciles(ml))

    # --- SIGKILL the leader: the follower takes over within the lease duration
    t_kill = time.time()
    os.killpg(lead.p.pid, signal.SIGKILL)
    lead.p.wait(10)
    create(env, ["ha-3", "ha-4"])  # pending work for the next leader
    t_new = cl.wait_for(lambda: fol.first("became the leader"), "failover", timeout=LEASE_S + 15)
    took = t_new - t_kill
    # the follower saw the last renewal at most one jittered retry period (up to 2.2 x 2 s,
    # client-go's JitterUntil factor 1.2) before the kill, then waits the lease duration and
    # tries again within one more jittered period; the rest is the acquiring GET and PUT on the
    # real API server and the log's own latency (3 s: an ASan build on a loaded 2-core machine
    # took 21.4 s, at the edge of a 2 s allowance)
    bound = LEASE_S + RETRY_S * 2.2 + 3.0
    log("failover: %s leads %.1f s after the SIGKILL (bound %.1f s)" % (fol.name, took, bound))
    check(took <= bound, "failover took %.1f s > %.1f s" % (took, bound))
    cl.wait_converged(env, ["ha-%d" % i for i in range(5)])
    lead.proxy.close()

    # --- SIGSTOP the leader; replica c takes over after the lease; on SIGCONT the old one
    # stops without reconciling anything
    stopped = fol
    c = Replica(env, "c")
    cl.wait_for(lambda: c.metrics().get("vmop_leader") == 0 and c.metrics(), "replica c up")
    n_before = len(stopped.lines())
    t_stop = time.time()
    os.killpg(stopped.p.pid, signal.SIGSTOP)
    create(env, ["ha-5"])
    env.kubectl_retry("patch", "vm", "ha-0", "-n", NS, "--type=merge", "-p",
                      json.dumps({"spec": {"powerState": "PoweredOff"}}))
    t_c = cl.wait_for(lambda: c.first("became the leader"), "c leads", timeout=LEASE_S + 20)
    log("sigstop: c leads %.1f s after the SIGSTOP" % (t_c - t_stop))
    check(t_c - t_stop >= LEASE_S - RETRY_S * 2.2 - 0.5,
          "c led %.1f s after the SIGSTOP: before the lease could expire" % (t_c - t_stop))
    t_cont = time.time()
    os.killpg(stopped.p.pid, signal.SIGCONT)
    cl.wait_for(lambda: stopped.p.poll() is not None or stopped.first("lost leadership"),
                "the old leader notices it lost the lease", timeout=RENEW_S + 10)
    after = stopped.lines()[n_before:]
    acts = [j for j in after if acting(j) and ts(j) >= t_cont - 0.5]
    log("sigstop: after SIGCONT the old leader logged %d lines, %d of them reconcile work" %
        (len(after), len(acts)))
    check(not acts, "the old leader acted after SIGCONT: %s" % [j.get("msg") for j in acts][:3])
    vms = ["ha-%d" % i for i in range(6)]
    cl.wait_converged(env, vms)
    log("invariants held: %s" % cl.invariants(env, vms))
    stopped.stop()
    c.stop()


def partition_closed(env, old, c):
    """Cut old (the leader) off the API server with closed connections: it must stop before c
    starts, by the log timestamps, and act no more after that."""
    t_cut = time.time()
    old.proxy.cut()
    create(env, ["pt-1"])
    t_c = cl.wait_for(lambda: c.first("became the leader"), "c leads", timeout=LEASE_S + 20)
    t_lost = cl.wait_for(lambda: old.first("lost leadership|stopped leading") or
                         (old.p.poll() is not None and time.time()), "old leader stops",
                         timeout=RENEW_S + 10)
    old_acts = [ts(j) for j in old.lines() if acting(j) and ts(j) >= t_cut]
    last_act = max(old_acts) if old_acts else 0
    log("partition: old stops %.1f s after the cut, new leads %.1f s after; old's last act: %s"
        % (t_lost - t_cut, t_c - t_cut,
           "%.1f s after the cut" % (last_act - t_cut) if old_acts else "none after the cut"))
    check(t_lost < t_c, "the old leader stopped %.1f s after the new one started" % (t_lost - t_c))
    check(last_act < t_c, "the old leader acted %.1f s after the new one started" % (last_act - t_c))
    check(t_c - t_cut >= RENEW_S, "new leader after %.1f s: before the old lease could expire" %
          (t_c - t_cut))
    cl.wait_for(lambda: old.p.poll() is not None, "old leader exits", timeout=20)
    old.stop()


def test_partition(env):
    """Partitions of the leader from the API server: first with closed connections
    (partition_closed), then black-holed (open, silent connections: a partition that drops
    packets). Each time it must stop acting within the renew deadline, before the other
    replica's lease takeover."""
    a, b = Replica(env, "a"), Replica(env, "b")
    lead = wait_leader([a, b])
    create(env, ["pt-0"])
    cl.wait_converged(env, ["pt-0"])
    problems = []
    try:
        partition_closed(env, lead, b if lead is a else a)
    except AssertionError as e:  # go on to the black hole; report both at the end
        problems.append("closed: %s" % e)
        cl.wait_for(lambda: lead.p.poll() is not None, "old leader exits", timeout=30)
        lead.stop()
    cl.wait_converged(env, ["pt-0", "pt-1"])
    lead = b if lead is a else a
    new = Replica(env, "c")
    cl.wait_for(lambda: new.metrics().get("vmop_leader") == 0 and new.metrics(), "replica c up")
    create(env, ["bh-0"])
    cl.wait_converged(env, ["bh-0"])
    t_cut = time.time()
    lead.proxy.blackhole()
    t_new = cl.wait_for(lambda: new.first("became the leader"), "takeover", timeout=LEASE_S + 20)

    def stopped():
        t = lead.first("lost leadership")
        if t:
            return t
        return time.time() if lead.p.poll() is not None else None
    # evidence of two acting leaders: power the VM off behind vmop's back; the vCenter change
    # feed re-queues it in both replicas (the old one still has its vCenter session)
    ref = env.get("vm", "bh-0")["status"]["uniqueID"]
    env.vimc("vm", "power", "off", ref)
    try:
        t_lost = cl.wait_for(stopped, "the old leader stops",
                             timeout=max(5.0, t_cut + 45 - time.time()))
    except AssertionError:
        t_lost = None
    old_acts = [j.get("msg") for j in lead.lines()
                if acting(j) and ts(j) >= t_new]
    log("black hole: after the takeover the old leader reports vmop_leader=%s and logged %d "
        "reconcile actions %s" % (lead.metrics().get("vmop_leader"), len(old_acts), old_acts[:3]))
    lost_s = "not within 45 s" if t_lost is None else "after %.1f s" % (t_lost - t_cut)
    log("black hole: new leader %.1f s after the partition; old leader stopped: %s (renew "
        "deadline %.0f s)" % (t_new - t_cut, lost_s, RENEW_S))
    if not (t_lost is not None and t_lost < t_new):
        problems.append("black hole: split brain: the partitioned leader stopped %s, the new one "
                        "leads since %.1f s" % (lost_s, t_new - t_cut))
    lead.stop()
    create(env, ["bh-1"])
    vms = ["pt-0", "pt-1", "bh-0", "bh-1"]
    cl.wait_converged(env, vms)
    log("invariants held: %s" % cl.invariants(env, vms))
    new.stop()
    check(not problems, "; ".join(problems))


def with_service(test):
    """test(env) with devenv's vmop replaced by electing replicas behind a WebhookService."""
    def run(env):
        global SERVICE
        env.kill_operator()
        SERVICE = WebhookService(env)
        try:
            test(env)
        finally:
            SERVICE.close()
            SERVICE = None
    return run


def main():
    if len(sys.argv) > 2 and sys.argv[2] == "partition":
        return cl.run_tests([("partition", with_service(test_partition))], [],
                            lambda: cl.Env(BUILD, tag="ha-pt"))
    return cl.run_tests([("ha", with_service(test_ha))], [], lambda: cl.Env(BUILD, tag="ha"))


if __name__ == "__main__":
    sys.exit(main())
