"""The grading pipeline: the instructor's wing of the course (students get `autograder/`, the
check library, and never this package).

How a class is graded (`./course autograde ID`), process by process, and what each hands on:

    ./course autograde ID
      |  cli.py (the command table) and arguments.py check ID before anything heavy loads
      v
    class run (classroom.py) ---- starts ----> kernel zygote (kernel_zygote.py)
      |  1. triage each runtime/submitted/STUDENT/ID/          imports torch, IPython and the
      |     (staging.py: links and special files refused,      check library once, warms them up,
      |     a broken notebook replaced by the release)         never runs student code; forks
      |  2. copy into runtime/grading/ID/shards/shard-K/       one kernel per request
      |  3. fork one worker per shard, each in a memory cgroup        ^
      |     of its own (cgroup.py), each with a pipe back              |
      v                                                                |  relay (kernel_relay.py):
    grade worker (grade_worker.py), one per core and one more          |  one Unix socket per kernel
      |  real `nbgrader autograde` over its shard                      |
      |  sanitize pass: flags.FindStructuralProblems (and code_scan:   |
      |     the student's code read for means of rewriting the grading |
      |     process, before any kernel)                                |
      |     -> notebook metadata "course_flags" (nbgrader runs the     |
      |        sanitize and autograde passes as two conversions; the   |
      |        notebook is the only thing that crosses between them)   |
      |  autograde pass: isolated_execute.IsolatedExecute ------------+
      |     - the source notebook's plan, read by the grader (source_plan.py), and
      |       the grader's own run of it (once per course, source and grader,
      |       kept for every worker: reference_store.py) in a kernel no student code ever
      |       touched: which tests the solution passes judged outside (judge.py), the records
      |       of the tests that stay in the kernel, the checks their shadows pass
      |     - each test's route, decided in one place (routing.py) from that run and the source
      |       cell's metadata (course.route, an author's override): outside, or in the kernel
      |       with its records re-checked, shadowed where the solution's shadow checks anything
      |     - the student's notebook, cell by cell, in a fresh sandboxed fork (sandbox.py:
      |       allow-list filesystem, its own PID and network namespaces, a size-limited work
      |       area (work_area.py), a uid of its own); after every cell the kernel's integrity audit
      |       (integrity.py) and its checks' records (autograder/trace.py) land in a records
      |       area the grader reads without following links
      |     - a test judged outside runs in the worker (judge.py) over the source's setup
      |       cells; the kernel only answers with data what a name holds and what a call
      |       returns (answer_server.py, over a socket the worker listens on in the records
      |       area, answer_channel.py), and never sees the test
      |     - a test run in the kernel counts only if verify.py, in the worker, agrees with it
      |       against the reference, and if its shadow (judge.py: its value checks, run in the
      |       worker against the same kernel) passes what the solution's shadow passes; the
      |       student's objects stay there as handles, the test's inputs cross pickled, graphs
      |       whole (remote.py, graph_replay.py) and come back as themselves (identity.py),
      |       gradients go through the kernel (autograd_bridge.py), files are mirrored
      |       (mirror.py); otherwise it fails and is flagged
      |     - what crosses from the kernel is data, bounded before anything walks it (bounds.py)
      |     -> resources["course_flags"], resources["course_device"] (graded_device.py)
      |  outcomes.RecordOutcomes (before SaveFlags): each test cell's score, kind of mistake
      |     and misconception -> runtime/grading/ID/outcomes/STUDENT.json, read by report.py
      |  flags.SaveFlags: flagged cells "needs manual grade" in the gradebook,
      |     and the flags and device to progress.note_flags (same process)
      |  pre/post-convert hooks progress.before/after: JSON lines on the worker's pipe
      v        Started, Preparing/Prepared, Graded (student, seconds, flags, device): records.py
    class run again
         reads the pipes, prints a line per student, records runtime/grading/ID/done/STUDENT.json
         (records.py's GradedRecord or FailedRecord: the student's files' digest, so a rerun skips
         them, their flags, seconds and device), and finally writes runtime/flags.csv from every
         assignment's done/ records. A worker that dies, that its watchdog ends, or that sends a
         line records.py refuses, costs only the student it was grading: graded again alone,
         then marked failed with the reason; the rest go to new shards. A done record refused is
         no verdict: its student is graded again.

Who runs what, as folders: cli.py and arguments.py (the command table, run by ./course);
commands/ (generate, report, export, bundle and the nbgrader steps they use); class_run/ (the
class run, its grade workers, triage, the reading of the student's code, flags, outcomes,
progress, records.py with its own wires' lines and records); judging/ (in each worker: the
execute step, the work area it runs a notebook in, what it reads of the source
(source_plan.py), the grader's own run of the solution (reference_run.py), the judge, the
re-checks); kernels/ (the zygote, relays, kept kernels, sandbox, cgroups, accelerators);
in_kernel/ (what a student's kernel imports, and all of classgrader it can see: the audit, the
answer server, protocol.py with every message between grader and kernel, which both ends
import, and the one check of every wire's, the one walker over nested data, the kernel halves
of identity and autograd, the bounds on what crosses).

Nothing in this wing is imported by `autograder/` or `utils/` (tests/test_layout.py).
"""
