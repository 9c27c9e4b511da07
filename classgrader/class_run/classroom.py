"""Grade a whole class in one command, in parallel, resumably:

    ./course autograde ASSIGNMENT [--workers N] [--force]

1. Triage every submission (submitted/STUDENT/ASSIGNMENT/) without running it: a notebook
   that is missing, renamed or not valid JSON is flagged, and the untouched release stands in
   for it (so it scores 0 through the normal pipeline instead of stopping the run).
2. Copy what is to be graded into runtime/grading/ASSIGNMENT/shard-K/, never touching the
   submitted files and never following a link in them (links and special files are refused and
   flagged, staging.py), and skip students already graded from the same files (resume, idempotence).
3. Start one warm kernel zygote, then fork one worker per core and one more (default_workers;
   grade_worker.py: real `nbgrader autograde` on its shard); show a progress bar and a line per student. A worker
   that dies is replaced for the students it had left; the others carry on.
4. Write runtime/flags.csv: every flag of every graded assignment, for manual review.
"""
import csv
import hashlib
import os
import select
import shutil
import signal
import sys
import time

from classgrader import time_limits
from classgrader.class_run import records, staging
from classgrader.commands.course import grader_digest, load_course
from classgrader.kernels.kernel_zygote import Zygote

# Everything the workers import, loaded here once before they are forked. This module itself
# imports none of it at the top: a class run starts its zygote first, and both load at once.
# torch._dynamo too: torch.optim loads it on first use (about 1.3 s of CPU), which would be once
# per worker per assignment, wherever a test judged on the grader's side makes an optimizer.
GRADING_STACK = ["nbgrader.apps", "classgrader.judging.isolated_execute", "classgrader.class_run.flags",
                 "classgrader.class_run.grade_worker", "torch._dynamo"]


def default_workers() -> int:
    """One worker per core, and one more. A worker and its student's kernel hand each question
    back and forth, and each hand-over leaves a core idle for a moment: with one worker per core
    a fifth of a 2-core machine's CPU time went idle (19%, against 7% with a third worker; one
    class of 08_capstone, benchmarks/class_grading.py), so a spare worker fills those gaps."""
    return (os.cpu_count() or 1) + 1


# One grading worker: nbgrader, torch and one student's test data (c.ClassRun.worker_memory_bytes).
WORKER_MEMORY = 6 * 2**30


def student_seconds(config) -> float:
    """How long one student's grading may hold a worker before the watchdog ends it
    (c.ClassRun.student_seconds): by default time_limits.watchdog of what the worker itself allows a
    notebook (IsolatedExecute.student_budget, by default time_limits.STUDENT_TIMEOUTS cell timeouts),
    so that the worker's own bound, which grades what it can, acts first."""
    if config.ClassRun.get("student_seconds"):
        return float(config.ClassRun.student_seconds)
    from autograder.validate import cell_timeout  # after the grading stack: it imports torch
    budget = time_limits.student_budget(cell_timeout(config), config.IsolatedExecute.get("student_budget", 0))
    return time_limits.watchdog(budget)


def _how_it_ended(status: int) -> str:
    """A worker's end, as waitpid's status says it."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        known = number in signal.Signals._value2member_map_
        return f"killed by {signal.Signals(number).name}" if known else f"signal {number}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


class ZygoteGone(RuntimeError):
    """No kernel can start: the run stops instead of failing every student one by one."""


def triage(folder: str, expected: list[str]) -> tuple[dict[str, str], list[str]]:
    """({notebook: why it cannot be graded}, flags) for one student's submission folder."""
    import nbformat
    present = sorted(f for f in os.listdir(folder) if f.endswith(".ipynb"))
    broken, flags = {}, []
    for name in expected:
        path = os.path.join(folder, name)
        if os.path.lexists(path) and (refused := staging.refusal(path, name)):
            why = refused
        elif not os.path.exists(path):
            others = [p for p in present if p not in expected]
            why = (f"renamed notebook: found {', '.join(others)}, expected {name}" if others
                   else f"missing notebook: {name} was not submitted")
        else:
            try:
                nbformat.validate(nbformat.reads(staging.read_bytes(path).decode("utf-8"), as_version=4))
                continue
            except Exception as error:  # any unreadable file: JSON, encoding or schema
                why = f"invalid notebook: {name} cannot be read ({type(error).__name__}: {str(error)[:120]})"
        broken[name] = why
        flags.append(why)
    return broken, flags


def grader_version(course, assignment: str) -> str:
    """Changes when what grading depends on changes: the source notebooks, the grader and the
    course's configuration."""
    digest = hashlib.sha256(grader_digest())
    source = course.format_path(course.source_directory, ".", assignment)
    for path in [*sorted(os.path.join(source, f) for f in os.listdir(source)),
                 os.path.join(course.root, "nbgrader_config.py")]:
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


def folder_digest(folder: str, version: str) -> str:
    digest = hashlib.sha256(version.encode())
    for relative, path, why in staging.walk(folder):  # a link counts by where it points, unread
        if why or os.path.isfile(path):
            digest.update(relative.encode() + b"\0" + (why.encode() if why else staging.read_bytes(path)))
    return digest.hexdigest()


def write_atomically(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as handle:
        handle.write(text)
    os.replace(path + ".tmp", path)


class ClassRun:
    def __init__(self, root: str, assignment: str, workers: int, force: bool, zygote: Zygote, out=sys.stdout):
        self.root, self.assignment, self.workers, self.force, self.out = root, assignment, workers, force, out
        self.zygote = zygote
        self.course = load_course(root)
        self.work = os.path.join(root, "runtime", "grading", assignment)
        self.release = self.course.format_path(self.course.release_directory, ".", assignment)
        self.expected = sorted(f for f in os.listdir(self.release) if f.endswith(".ipynb"))
        self.worker_memory = int(self.course.config.ClassRun.get("worker_memory_bytes", 0) or WORKER_MEMORY)

    def _in_gradebook(self) -> bool:
        """Whether nbgrader's gradebook knows the assignment (./course generate records it)."""
        from nbgrader.api import Gradebook, MissingEntry
        with Gradebook(self.course.db_url) as gradebook:
            try:
                gradebook.find_assignment(self.assignment)
                return True
            except MissingEntry:
                return False

    def submissions(self) -> dict[str, str]:
        submitted = os.path.join(self.root, self.course.submitted_directory)
        found = {}
        for student in sorted(os.listdir(submitted)) if os.path.isdir(submitted) else []:
            folder = os.path.join(submitted, student, self.assignment)
            # lexists: a student folder that is a link is refused at staging, not skipped
            if os.path.lexists(folder) and (os.path.isdir(folder) or os.path.islink(folder)):
                found[student] = folder
        return found

    def done_path(self, student: str) -> str:
        return os.path.join(self.work, "done", f"{student}.json")

    def stage(self, students: dict[str, str]) -> dict[str, dict]:
        """Triage, skip what is done, copy the rest into shards. Returns the pending students."""
        version = grader_version(self.course, self.assignment)
        pending: dict[str, dict] = {}
        for student, folder in students.items():
            # A submission folder (or student folder) that is a link is never entered.
            whole = staging.refusal(os.path.dirname(folder), student) or staging.refusal(folder, self.assignment)
            key = hashlib.sha256((version + whole).encode()).hexdigest() if whole else folder_digest(folder, version)
            if not self.force and self._graded_key(student) == key:
                continue
            broken, flags = (dict.fromkeys(self.expected, whole), [whole]) if whole else triage(folder, self.expected)
            pending[student] = {"key": key, "flags": flags, "folder": None if whole else folder, "broken": broken}
        shutil.rmtree(os.path.join(self.work, "shards"), ignore_errors=True)
        shards = max(1, min(self.workers, len(pending)))
        for number, (student, info) in enumerate(sorted(pending.items())):
            info["shard"] = os.path.join(self.work, "shards", f"shard-{number % shards}")
            target = os.path.join(info["shard"], student, self.assignment)
            os.makedirs(target)
            if info["folder"]:
                refused = staging.copy_tree(info["folder"], target, skip=lambda relative: relative.endswith(".ipynb"))
                info["flags"] += [why for why in refused if why not in info["flags"]]
            for name in self.expected:
                # The release stands in for a notebook that cannot be graded: it scores 0.
                origin = os.path.join(self.release if name in info["broken"] else info["folder"], name)
                staging.write_new(os.path.join(target, name), staging.read_bytes(origin))
            self._forget_attempt(student)
        return pending

    def _graded_key(self, student: str) -> str | None:
        """What the student's done record says was graded; None without one, and for a record
        that does not conform (said here): the student is graded again, as if it had none."""
        try:
            record = records.read_done(self.done_path(student))
        except records.Malformed as error:
            self.out.write(f"  {student}: {error}; graded again\n")
            return None
        return record["key"] if record else None

    def _forget_attempt(self, student: str) -> None:
        """A half-finished earlier attempt must not be taken for a finished one."""
        shutil.rmtree(self.course.format_path(self.course.autograded_directory, student, self.assignment),
                      ignore_errors=True)

    def grade(self, pending: dict[str, dict]) -> list[str]:
        """Run the workers until every student has a verdict; returns the students marked failed.
        A worker that dies (a crash, or the watchdog: see _run_workers) costs only its cause:
        the student it was grading then is graded again alone, the rest of its shard in new
        shards; a student whose grading dies when alone is marked failed with the reason."""
        left, alone, failed = dict(pending), set(), []
        round_number = 0
        while left:
            before = len(left)
            died = self._run_workers(sorted({info["shard"] for info in left.values()}), left)
            round_number += 1
            for student, why in died.items():
                if student in alone:
                    self._mark_failed(student, left.pop(student), why)
                    failed.append(student)
                alone.add(student)
            if left and len(left) == before and not died:  # workers ended with nobody to blame
                for student in sorted(left):
                    self._mark_failed(student, left.pop(student), "its grading worker ended before grading it "
                                                                  f"(see {self.work}/worker-*.log)")
                    failed.append(student)
            if left:
                self._reshard(left, alone, round_number)
        return sorted(failed)

    def _reshard(self, left, alone, round_number):
        """The students left, in new shards: each suspect of a crash in a shard of its own."""
        others = sorted(student for student in left if student not in alone)
        shards = max(1, min(self.workers, len(others)))
        for number, student in enumerate(sorted(left)):
            name = f"alone-{student}" if student in alone else f"retry-{number % shards}"
            shard = os.path.join(self.work, "shards", f"round-{round_number}", name)
            target = os.path.join(shard, student, self.assignment)
            shutil.rmtree(os.path.dirname(target), ignore_errors=True)
            staging.copy_tree(os.path.join(left[student]["shard"], student, self.assignment), target)
            left[student]["shard"] = shard
            self._forget_attempt(student)

    def _memory_limit(self):
        """A memory limit of its own for the next worker (the cgroup memory controller), or None
        where the machine has none: the worker then bounds its address space instead."""
        from classgrader.kernels import cgroup
        try:
            return cgroup.MemoryLimit.create(self.worker_memory, "grade-worker")
        except cgroup.CgroupUnavailable as why:
            if not getattr(self, "_said_no_cgroup", False):
                self.out.write(f"(no cgroup memory limit for the workers: {why}; each bounds its address space)\n")
                self._said_no_cgroup = True
            return None

    def _scratch_folder(self, n: int) -> str:
        """Worker n's temporary folder, beside its log, made anew: what a worker leaves in its
        temporary folder (its kernels' connection files, which jupyter_client removes only when
        it shuts a kernel down) goes with it, even when it was killed."""
        folder = os.path.join(self.work, f"worker-{n}.tmp")
        shutil.rmtree(folder, ignore_errors=True)  # one a killed class run left
        os.mkdir(folder, 0o700)
        return folder

    def _how_it_ended(self, status: int, memory) -> str:
        """How a worker ended, and whether its memory limit ended it; its limit is removed."""
        if memory is None:
            return _how_it_ended(status)
        try:
            if memory.oom_kills():
                return f"it went past its memory limit of {self.worker_memory / 2**30:.1f} GiB"
            return _how_it_ended(status)
        finally:
            memory.close()

    def _mark_failed(self, student: str, info: dict, why: str) -> None:
        """A verdict for a student whose grading cannot finish: a flag with the reason."""
        flags = [records.flag(None, reason) for reason in info["flags"]]
        flags.append(records.flag(None, f"not graded: {why}; review by hand, or run again with --force"))
        write_atomically(self.done_path(student), records.done_json(records.failed_record(info["key"], flags, why)))
        self.out.write(f"\r\033[K  {student:<32} NOT GRADED: {why[:90]}\n")

    def _run_workers(self, shards, left):
        from classgrader.class_run import grade_worker
        pipes = {}  # read end -> worker pid; each worker reports on a pipe of its own
        memory = {}  # read end -> the worker's memory limit (a cgroup.MemoryLimit), where there is one
        logs = {}  # read end -> the worker's log
        scratch = {}  # read end -> the worker's temporary folder, removed once it has ended, however it ended
        for n, shard in enumerate(shards):
            read, write = os.pipe()
            memory[read] = self._memory_limit()
            logs[read] = os.path.join(self.work, f"worker-{n}.log")
            scratch[read] = self._scratch_folder(n)
            pid = grade_worker.start(self.assignment, shard, write, logs[read],
                                     self.zygote.socket_path, memory[read] or self.worker_memory, scratch[read])
            os.close(write)  # the worker holds the only write end: its end is the pipe's end
            pipes[read] = pid
        pending = dict.fromkeys(pipes, b"")
        grading = {}  # read end -> (student, when its grading started)
        died = {}  # student -> why: the student a worker was grading when it died
        refused = set()  # read ends of workers stopped for a line refused: nothing more of theirs is read
        while pipes:
            ready, _, _ = select.select(list(pipes), [], [], 0.5)
            for read in ready:
                chunk = os.read(read, 65536)
                if not chunk:  # the worker is gone (done or dead); a dead one's students stay left
                    os.close(read)
                    _, status = os.waitpid(pipes.pop(read), 0)
                    student = grading.pop(read, (None,))[0]
                    # Its memory group first: closing it kills what the worker left running (a
                    # kernel's relay, which may yet write in the worker's temporary folder).
                    how = self._how_it_ended(status, memory.pop(read))
                    shutil.rmtree(scratch.pop(read), ignore_errors=True)
                    if student in left and student not in died:
                        died[student] = f"its grading worker ended ({how}) while grading it"
                    continue
                if read in refused:
                    continue
                *lines, pending[read] = (pending[read] + chunk).split(b"\n")
                for line in lines:
                    try:
                        event = records.read_progress(line)
                    except records.Malformed as error:
                        self._refuse(read, pipes[read], logs[read], error, grading, died)
                        refused.add(read)
                        break
                    self._take(read, event, grading, left)
            for read, (student, since) in list(grading.items()):
                if time.monotonic() - since > self.student_seconds and read in pipes:
                    # The watchdog: whatever holds this worker (a stall in the grader's own process),
                    # it ends here, and the student is graded again alone.
                    died[student] = f"its grading took longer than {self.student_seconds:.0f} s"
                    os.kill(pipes[read], signal.SIGKILL)
                    grading[read] = (student, float("inf"))
            self._bar()
            if self.zygote.failed():
                for read, pid in pipes.items():
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    os.close(read)
                    if memory.get(read) is not None:
                        memory[read].close()  # its cgroup goes with it
                    shutil.rmtree(scratch[read], ignore_errors=True)
                raise ZygoteGone(self.zygote.failed())
        return died

    def _take(self, read: int, event: records.Progress, grading: dict, left: dict) -> None:
        """One line of a worker's: a student's clock, or a student graded."""
        student = grading.get(read, (None,))[0]
        if event["kind"] == "started":
            grading[read] = (event["student"], time.monotonic())
        elif event["kind"] == "prepared":  # the student's clock starts again
            grading[read] = (student, time.monotonic())
        elif event["kind"] == "preparing":  # the grader's own run of the solution: a longer clock
            grading[read] = (student, time.monotonic() + time_limits.PREPARING * self.student_seconds)
        else:
            grading.pop(read, None)
            self._finished(event["student"], left.pop(event["student"], None), event)

    def _refuse(self, read: int, pid: int, log: str, error: records.Malformed, grading: dict, died: dict) -> None:
        """A line the worker should not have sent: none of it is taken, the worker is stopped,
        and the student it was grading counts as its cause, as with a worker that dies."""
        student = grading.get(read, (None,))[0]
        if student is not None and student not in died:
            died[student] = f"its grading worker sent a line the class run refuses ({error}; see {log})"
        grading[read] = (student, float("inf"))  # no watchdog for a worker already stopped
        os.kill(pid, signal.SIGKILL)
        self.out.write(f"\r\033[K  {log}: {error}; its worker is stopped\n")

    def _finished(self, student: str, info: dict | None, event: records.Graded) -> None:
        if info is None:
            return
        flags = [records.flag(None, reason) for reason in info["flags"]] + event["flags"]
        record = records.graded_record(info["key"], flags, event["seconds"], event["device"])
        write_atomically(self.done_path(student), records.done_json(record))
        self.graded += 1
        mark = f"flagged: {flags[0]['reason'][:90]}" if flags else "ok"
        self.out.write(f"\r\033[K  {student:<32} graded in {event['seconds']:5.1f} s  {mark}\n")

    def _bar(self):
        moment = (self.graded, int(time.perf_counter() - self.started) // 5)
        if moment == getattr(self, "_last_bar", None):
            return  # redraw on news, or every 5 s: keeps logs of non-terminal runs short
        self._last_bar = moment
        width = 30
        filled = int(width * self.graded / max(1, self.total))
        self.out.write(f"\r\033[K[{'#' * filled}{'.' * (width - filled)}] {self.graded}/{self.total} "
                       f"{self.assignment}, {time.perf_counter() - self.started:.0f} s")
        self.out.flush()

    def run(self) -> int:
        self.started = time.perf_counter()
        students = self.submissions()
        pending = self.stage(students)
        self.total, self.graded = len(pending), 0
        self.out.write(f"{self.assignment}: {len(students)} submissions, {len(pending)} to grade "
                       f"({len(students) - len(pending)} already graded), {self.workers} workers\n")
        failed = []
        if pending and not self._in_gradebook():
            self.out.write(f"./course autograde: the gradebook has no assignment '{self.assignment}' (its record "
                           f"was removed with runtime/?): run ./course generate {self.assignment}, then grade again\n")
            return 2
        if pending:
            if self.zygote.failed():  # before seconds of imports for workers that could not start kernels
                raise ZygoteGone(self.zygote.failed())
            for name in GRADING_STACK:
                __import__(name)
            self.student_seconds = student_seconds(self.course.config)  # reads it as the stack just loaded does
            failed = self.grade(pending)
            self._bar()
            self.out.write("\n")
        write_flags_csv(self.root, self.course)
        for student in failed:
            self.out.write(f"NOT GRADED: {student}, flagged with the reason (see runtime/flags.csv and "
                           f"{self.work}/worker-*.log)\n")
        return 0


def write_flags_csv(root: str, course) -> str:
    """runtime/flags.csv: one row per flag, every assignment, for the instructor to review."""
    path = os.path.join(root, "runtime", "flags.csv")
    rows: list[list[str]] = []
    grading = os.path.join(root, "runtime", "grading")
    for assignment in sorted(os.listdir(grading)) if os.path.isdir(grading) else []:
        done = os.path.join(grading, assignment, "done")
        found, refused = records.read_done_folder(done)
        for student in sorted(found.keys() | refused.keys()):
            if student in refused:  # no verdict: the student is to be graded again
                rows.append([assignment, student, "", f"{refused[student]}: ./course autograde {assignment} "
                                                      "grades it again", ""])
                continue
            record = found[student]
            device = record["device"] if record["kind"] == "graded" else None
            rows.extend([assignment, student, flag["item"] or "", flag["reason"], device or ""]
                        for flag in record["flags"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["assignment", "student_id", "item", "reason", "graded_on"])
        writer.writerows(rows)
    os.replace(path + ".tmp", path)
    return path


def main(argv=None) -> int:
    from classgrader.cli import parse_or_exit  # the one command table: ./course autograde's arguments, checked there
    args = parse_or_exit("autograde", sys.argv[1:] if argv is None else list(argv))
    args.assignments, args.workers = args.ids, args.workers or default_workers()
    from classgrader.kernels import sandbox
    if os.environ.get("COURSE_SANDBOX", "on") != "off" and sandbox.unavailable_reason() is None:
        # Kernels' work areas are mounted by the workers and seen by the zygote's kernels: all
        # in a mount namespace of this run's own, gone with it even if the run is killed.
        sandbox.private_mounts()
    zygote = Zygote(wait=False, kernels_at_once=args.workers)  # loads torch while this process loads nbgrader
    try:
        # One zygote for them all: each further assignment saves its start (torch, the kernel).
        return max(ClassRun(os.getcwd(), assignment, args.workers, args.force, zygote).run()
                   for assignment in args.assignments)
    except ZygoteGone as error:
        print(f"./course autograde: {error}; nothing graded in this run is lost, run again to go on",
              file=sys.stderr)
        return 1
    finally:
        zygote.stop()


if __name__ == "__main__":
    sys.exit(main())
