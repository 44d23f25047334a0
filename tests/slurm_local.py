"""A throw-away single-node SLURM cluster on localhost (Debian's slurm-wlm + munge), for the SLURM profile test
(tests/workflow/test_slurm_profile.py).

Everything lives in one directory: slurm.conf, munge key and socket, state and spool dirs, logs, pid
files. Nothing under /etc is touched: the daemons get their config with ``-f``, clients (sbatch, squeue,
srun, the Snakemake SLURM executor and its jobs) through ``SLURM_CONF``, and Slurm talks to our own
munged through ``AuthInfo=socket=...``. Ports are picked free at start, so another Slurm on the machine
is not disturbed. Needs root (slurmd launches jobs as the submitting user).

    python tests/slurm_local.py start DIR     # prints `export SLURM_CONF=DIR/slurm.conf`
    python tests/slurm_local.py status DIR
    python tests/slurm_local.py stop DIR      # cancels jobs, stops the daemons started by `start`

From Python: ``with LocalSlurm(DIR) as cluster: ...`` (``cluster.env`` has SLURM_CONF).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sinfo", "scontrol", "scancel", "srun")
# wrapped in DIR/bin (first on PATH) with SLURM_CONF set: snakemake-executor-plugin-slurm-jobstep removes
# SLURM_* variables, SLURM_CONF included, before its `srun` inside the job (on a real cluster the config
# is at /etc/slurm or served configless by slurmd; this private cluster must not write either)
WRAPPED = CLIENTS + ("sacct", "sacctmgr", "sshare", "salloc", "sstat")


class SlurmUnavailable(RuntimeError):
    """The local cluster cannot be started here; the message says exactly why."""


def missing_requirements():
    """Reasons why a local cluster cannot be started (empty list: try it)."""
    reasons = []
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        reasons.append("not running as root (slurmd must run as root to launch jobs)")
    for exe in DAEMONS + CLIENTS:
        if not _which(exe):
            reasons.append(f"{exe} not found (apt-get install -y slurm-wlm munge)")
    return reasons


def _which(exe):
    return shutil.which(exe, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/local/sbin")


def _free_ports(n):
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _node_line():
    """`slurmd -C` prints this machine's NodeName/CPUs/sockets/cores/RealMemory line."""
    out = subprocess.run([_which("slurmd"), "-C"], check=False, capture_output=True, text=True, timeout=30)
    for line in out.stdout.splitlines():
        if line.startswith("NodeName="):
            return line.strip()
    raise SlurmUnavailable(f"`slurmd -C` did not describe this node: {out.stdout}{out.stderr}")


class LocalSlurm:
    """munged + slurmctld + slurmd for one node, all state under ``root``."""

    def __init__(self, root, cluster_name="mvltest", min_job_age=600):
        self.root = Path(root).resolve()
        self.cluster_name = cluster_name
        self.min_job_age = min_job_age
        self.conf = self.root / "slurm.conf"
        self.logdir = self.root / "log"
        self.pidfile = self.root / "pids.json"
        self.procs = {}

    # ---------------------------------------------------------------- files

    @property
    def env(self):
        """Environment for clients: our slurm.conf and client wrappers; no inherited job context."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = f"{self.root / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        return env

    def write_wrappers(self):
        bindir = self.root / "bin"
        bindir.mkdir(parents=True, exist_ok=True)
        os.chmod(bindir, 0o755)
        for exe in WRAPPED:
            real = _which(exe)
            if real:
                wrapper = bindir / exe
                wrapper.write_text(f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec "{real}" "$@"\n')
                os.chmod(wrapper, 0o755)

    def write_config(self):
        for sub in ("munge", "state", "spool", "log"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        for sub in ("munge", "state", "spool"):
            os.chmod(self.root / sub, 0o700)
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        # RealMemory 90 % of what slurmd measures: a few MB of drift must never drain the node
        node = " ".join(
            f"RealMemory={int(int(f.split('=')[1]) * 0.9)}" if f.startswith("RealMemory=") else f
            for f in _node_line().split()
        )
        name = node.split()[0].split("=", 1)[1]
        ctld_port, slurmd_port = _free_ports(2)
        r = self.root
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={name}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={r}/munge/munge.socket.2",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            # no cgroups: plain process tracking, no task binding
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            # no accounting database: sacct cannot answer, squeue must; keep finished jobs visible to it
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={r}/log/jobcomp.log",
            f"MinJobAge={self.min_job_age}",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "KillWait=10",
            f"{node} NodeAddr=127.0.0.1 State=UNKNOWN",
            f"PartitionName=debug Nodes={name} Default=YES MaxTime=INFINITE State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")
        self.write_wrappers()
        return name

    # ---------------------------------------------------------------- daemons

    def _spawn(self, name, argv):
        log = open(self.logdir / f"{name}.stdout", "ab")
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env,
            start_new_session=True, cwd=self.root,
        )
        log.close()
        self.procs[name] = proc
        self._save_pids()
        time.sleep(0.5)
        if proc.poll() is not None:
            raise SlurmUnavailable(f"{name} exited at once with status {proc.returncode}:\n{self.tail(name)}")
        return proc

    def _save_pids(self):
        self.pidfile.write_text(json.dumps({k: p.pid for k, p in self.procs.items()}))

    def tail(self, name, n=40):
        out = []
        for f in sorted(self.logdir.glob(f"{name}*")):
            lines = f.read_text(errors="replace").splitlines()[-n:]
            out.append(f"--- {f.name}\n" + "\n".join(lines))
        return "\n".join(out) or f"(no log of {name})"

    def start(self, timeout=90):
        reasons = missing_requirements()
        if reasons:
            raise SlurmUnavailable("; ".join(reasons))
        name = self.write_config()
        r = self.root
        self._spawn("munged", [
            _which("munged"), "--foreground", "--force",
            f"--socket={r}/munge/munge.socket.2", f"--key-file={r}/munge/munge.key",
            f"--pid-file={r}/munge/munged.pid", f"--seed-file={r}/munge/munged.seed",
            f"--log-file={r}/log/munged.log",
        ])
        self._wait_for((r / "munge" / "munge.socket.2").exists, 20, "munged socket")
        # -i: ignore state from earlier runs (a fresh directory has none anyway)
        self._spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._wait_for(lambda: self.run("scontrol", "ping").returncode == 0 and "UP" in self.run(
            "scontrol", "ping").stdout, 30, "slurmctld to answer `scontrol ping`", "slurmctld")
        self._spawn("slurmd", [_which("slurmd"), "-D", "-f", str(self.conf), "-N", name])
        self._wait_for(lambda: self.node_state() in ("idle", "mixed", "allocated"), timeout,
                       "the node to be idle in sinfo", "slurmd")
        return self

    def _wait_for(self, predicate, timeout, what, daemon=None):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SlurmUnavailable(
                        f"{name} exited with status {proc.returncode} while waiting for {what}:\n{self.tail(name)}"
                    )
            try:
                if predicate():
                    return
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.5)
        detail = self.tail(daemon) if daemon else ""
        state = self.run("sinfo", "-N", "-o", "%N %T %E").stdout if daemon == "slurmd" else ""
        raise SlurmUnavailable(f"timed out after {timeout} s waiting for {what}\n{state}\n{detail}")

    def run(self, *argv, timeout=30):
        return subprocess.run([_which(argv[0]), *argv[1:]], check=False, capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def node_state(self):
        out = self.run("sinfo", "-h", "-N", "-o", "%T")
        return out.stdout.strip().rstrip("*~#$@+-^!%").lower() if out.returncode == 0 else ""

    def cancel_all(self, timeout=60):
        """Cancel every job of this (private) cluster and wait until none runs."""
        if not self.conf.exists():
            return
        try:
            self.run("scancel", "--full", "--user", "root")
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                out = self.run("squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING,SUSPENDED", "-o", "%i")
                if out.returncode != 0 or not out.stdout.strip():
                    return
                time.sleep(1)
        except (subprocess.TimeoutExpired, OSError):
            pass

    def stop(self, timeout=30):
        """Cancel jobs, then stop slurmd, slurmctld and munged (those started by this object or `start`)."""
        self.cancel_all()
        pids = {k: p.pid for k, p in self.procs.items()}
        if not pids and self.pidfile.exists():
            pids = json.loads(self.pidfile.read_text())
        for name in ("slurmd", "slurmctld", "munged"):
            pid = pids.get(name)
            if pid is None:
                continue
            proc = self.procs.get(name)
            _terminate(pid, proc, timeout)
        self.procs.clear()
        if self.pidfile.exists():
            self.pidfile.unlink()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


def _alive(pid, proc):
    if proc is not None:
        return proc.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of an exited daemon started by another process: not alive
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _terminate(pid, proc, timeout):
    """SIGTERM one daemon (and its process group: slurmd/slurmctld helpers), then SIGKILL after ``timeout``."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not _alive(pid, proc):
            break
        try:
            os.killpg(pid, sig)  # started with start_new_session: pgid == pid
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid, proc):
            time.sleep(0.2)
    if proc is not None:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("dir", help="directory for config, state, logs (created)")
    args = parser.parse_args(argv)
    cluster = LocalSlurm(args.dir)
    if args.action == "start":
        try:
            cluster.start()
        except SlurmUnavailable as err:
            cluster.stop()
            print(f"local SLURM cannot run here: {err}", file=sys.stderr)
            return 1
        print(f"export SLURM_CONF={cluster.conf}")
        return 0
    if args.action == "stop":
        cluster.stop()
        return 0
    print(cluster.run("sinfo").stdout + cluster.run("squeue").stdout if cluster.conf.exists() else "not configured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
