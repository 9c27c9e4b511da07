"""benchmarks/cpu_by_process.py: a command's CPU time, by kind of process, children and forks included."""
import subprocess
import sys

from coursekit import ROOT

TOOL = ROOT / "benchmarks" / "cpu_by_process.py"

SPIN = "import time\\nend = time.process_time() + 0.6\\nwhile time.process_time() < end: pass"
# A parent that idles while a module runs, and a child and a fork each spin for 0.6 s of CPU.
FAMILY = f"""
import os, subprocess, sys, time
def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
subprocess.run([sys.executable, "-m", "timeit", "-n", "1", "-r", "1", "import time; time.sleep(0.5)"])
child = subprocess.Popen([sys.executable, "-c", "{SPIN}"])
pid = os.fork()
if pid == 0:
    spin(0.6)
    os._exit(0)
os.waitpid(pid, 0)
child.wait()
"""


def test_each_kind_of_process_gets_its_cpu_time():
    done = subprocess.run([sys.executable, str(TOOL), "--every", "0.05", "--", sys.executable, "-c", FAMILY],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[4].strip(): (float(line.split("|")[1]), int(line.split("|")[3]))
            for line in done.stderr.splitlines() if line.startswith("| ") and "kind" not in line}
    fork = next(kind for kind in rows if kind.startswith("(fork of) "))
    child = next(kind for kind in rows if kind.startswith("python") and "process_time() + 0.6" in kind)
    assert rows[fork][0] >= 0.4 and rows[child][0] >= 0.4, rows  # counted as of their last reading
    assert "timeit" in rows, rows  # a module's kind is its name
    summary = done.stderr.splitlines()[0]
    assert "CPU-s in" in summary and "taken by the host (steal)" in summary, summary


def test_no_command_is_one_line_and_exit_2():
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("give the command to measure after --")


def test_a_command_that_uses_no_cpu_still_gets_its_table():
    done = subprocess.run([sys.executable, str(TOOL), "--every", "0.05", "--", "sleep", "0.3"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "| sleep |" in done.stderr or "| sleep 0.3 |" in done.stderr, done.stderr


def test_a_process_is_named_by_what_it_runs_after_its_exec():
    """A process first read before its exec (a busy machine stretches the gap) is named by what
    it runs after it, not by the command line it was forked with."""
    late_exec = "import os, time; time.sleep(0.3); os.execvp('sleep', ['sleep', '0.3'])"
    done = subprocess.run([sys.executable, str(TOOL), "--every", "0.05", "--", sys.executable, "-c", late_exec],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    kinds = [line.split("|")[4].strip() for line in done.stderr.splitlines()
             if line.startswith("| ") and "kind" not in line]
    assert kinds == ["sleep 0.3"], done.stderr


ORPHAN = ("import os, time\\nif os.fork() == 0:\\n    end = time.process_time() + 0.4\\n"
          "    while time.process_time() < end: pass\\n    os._exit(0)\\ntime.sleep(0.2)")


def test_a_fork_keeps_its_name_when_its_parent_has_gone():
    """A fork whose parent ends before it (a grading kernel whose relay has gone) gets another
    parent: it is still counted as the fork it was."""
    family = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', '{ORPHAN}'])\ntime.sleep(1.2)"
    done = subprocess.run([sys.executable, str(TOOL), "--every", "0.05", "--", sys.executable, "-c", family],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[4].strip(): (float(line.split("|")[1]), int(line.split("|")[3]))
            for line in done.stderr.splitlines() if line.startswith("| ") and "kind" not in line}
    forks = {kind: row for kind, row in rows.items() if kind.startswith("(fork of) python -c import os, time")}
    assert len(forks) == 1 and next(iter(forks.values()))[0] >= 0.3, done.stderr
    assert sum(count for _, count in rows.values()) == 3, done.stderr  # the command, its child, the fork
