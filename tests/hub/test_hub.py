"""A class on a real JupyterHub on this machine (./course hub): an instructor and three students,
each a real system user with their own JupyterLab, each driven in their own headless Chromium
session (Debian's, through Playwright), through the whole round trip:

the instructor releases; each student logs in with their password, fetches from the Assignment
List, works (the solution, a wrong answer, nothing), validates and submits; the instructor
collects, grades with `course-autograde` (./course autograde, sandboxed, as root through sudo),
makes and releases feedback and exports; each student fetches feedback and gets exactly their own,
and one opens it from the Assignment List and clicks a contents entry: the lab's viewer scrolls to the
question, its pane not blanked by the servers' frame-ancestors 'none'.
Then: the gradebook and the export hold every student's right score; no student can read another's
work, the instructor's course folder, the gradebook or the exchange's submissions, tried from their
own terminal and their own kernel; a student's lab has no instructor tools and the instructor's
Formgrader lists the submissions; the hub stops and leaves no process behind.

The users (pthub-*) are made for the test and removed after it, with everything they ran.
Skipped, saying why, when not root or without Chromium; in CI (CI=true) it fails instead."""
import csv
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from coursekit import ROOT, build_submission, read_notebook
from scenarios import unit01

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]  # see tests/browser/test_browser.py
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")
STATE = Path("/srv/pytorch-course-hubtest")
EXCHANGE = STATE / "exchange"
SUDOERS = Path("/etc/sudoers.d/course-hub-pytorch-course-hubtest")  # hub/install.py's sudoers_file(STATE)
INSTRUCTOR = "pthub-teacher"
# Each student does one scenario of unit 01 (tests/scenarios/unit01.py, which says what it loses).
STUDENTS = {"pthub-ana": "solution", "pthub-ben": "len_as_numel", "pthub-cleo": "untouched"}
ASSIGNMENT, NOTEBOOK = unit01.ASSIGNMENT, unit01.NOTEBOOK
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
HUB_UP_S = 600  # the first run on a machine builds the hub's environment (torch and all)


def why_not() -> str:
    if os.geteuid() != 0:
        return "the hub test makes system users and serves them: run it as root"
    if not CHROMIUM.exists():
        return f"the hub test needs Debian's Chromium at {CHROMIUM}: apt-get install -y --no-install-recommends chromium"
    return ""


pytestmark = pytest.mark.skipif(bool(why_not()) and not IN_CI, reason=why_not() or "-")
pytestmark = [pytestmark, pytest.mark.early(2)]


# ---- the machine: users, processes, ports ----

def class_users() -> list[str]:
    return [INSTRUCTOR, *STUDENTS]


def uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def running(proc: psutil.Process) -> bool:
    """Still running: a zombie has ended and holds nothing (here PID 1, which inherits the hub's
    orphans, collects them late), so it does not count."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def their_processes() -> list[psutil.Process]:
    """Processes run by the test's users, and the hub and proxy a run of it left (by their pid files)."""
    uids = {u for u in map(uid, class_users()) if u is not None}
    found = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in uids]
    for pid_file in (STATE / "jupyterhub.pid", STATE / "proxy.pid"):
        try:
            found.append(psutil.Process(int(pid_file.read_text())))
        except (OSError, ValueError, psutil.NoSuchProcess):
            pass
    return found


def remove_class() -> None:
    """Everything a run made: processes (each by pid), users (only those the hub recorded making), files."""
    for proc in their_processes():
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(their_processes(), timeout=10)
    record = STATE / "class.json"
    made = json.loads(record.read_text()).get("made", []) if record.exists() else []
    for name in class_users():
        if name in made and uid(name) is not None:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
    shutil.rmtree(STATE, ignore_errors=True)
    SUDOERS.unlink(missing_ok=True)


def three_free_ports() -> int:
    """A port whose next two are free too (the hub's own and the proxy's API, hub/jupyterhub_config.py)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 65000 and all(port_free(port + k) for k in (1, 2)):
            return port
    raise AssertionError("no three free ports in a row")


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def wait_for_hub(base: str, hub: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + HUB_UP_S
    while time.monotonic() < deadline:
        if hub.poll() is not None:
            raise AssertionError(f"./course hub exited {hub.returncode}:\n{log.read_text()[-4000:]}")
        try:
            urllib.request.urlopen(f"{base}/hub/api", timeout=2)
            return
        except OSError:
            time.sleep(1)
    raise AssertionError(f"the hub did not answer in {HUB_UP_S} s:\n{log.read_text()[-4000:]}")


# ---- driving one person's JupyterLab through their browser session ----

# A shell in the person's own terminal (their server's): runs a command, returns its output and status.
TERMINAL = """async ([cmd, timeoutMs]) => {
  const term = await window.jupyterapp.serviceManager.terminals.startNew();
  let out = '';
  term.messageReceived.connect((_, msg) => { if (msg.type === 'stdout') out += msg.content[0]; });
  const start = Date.now(), sleep = ms => new Promise(r => setTimeout(r, ms));
  while (!out && Date.now() - start < 20000) await sleep(100);  // the prompt
  term.send({type: 'stdin', content: [cmd + '; echo "__EXIT__$?__"\\r']});
  let m;  // the echoed command shows "$?", not digits
  while (!(m = out.match(/__EXIT__(\\d+)__/)) && Date.now() - start < timeoutMs) await sleep(200);
  await term.shutdown();
  return {out, code: m ? Number(m[1]) : null};
}"""

# Python in a fresh kernel of the person's own server: returns what it printed (and any error).
KERNEL = """async (code) => {
  const kernel = await window.jupyterapp.serviceManager.kernels.startNew({name: 'python3'});
  let out = '';
  try {
    const future = kernel.requestExecute({code});
    future.onIOPub = msg => {
      if (msg.header.msg_type === 'stream') out += msg.content.text;
      if (msg.header.msg_type === 'error') out += msg.content.ename + ': ' + msg.content.evalue;
    };
    await future.done;
  } finally { await kernel.shutdown(); }
  return out;
}"""

SAVE = """async ([path, nb]) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content: nb});
  return true;
}"""


class Person:
    def __init__(self, browser, base: str, name: str, password: str):
        self.name, self.base = name, base
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(120_000)
        self.password = password

    def log_in(self) -> None:
        """The hub's real login form; the hub then starts their server (the wait is in ready())."""
        self.page.goto(f"{self.base}/hub/login")
        self.page.fill("#username_input", self.name)
        self.page.fill("#password_input", self.password)
        self.page.click("#login_submit")
        self.page.wait_for_url(lambda url: "/hub/login" not in url)
        # Start their server (no options form: it starts at once) without waiting for it here.
        self.page.goto(f"{self.base}/hub/spawn/{self.name}", wait_until="commit")

    def ready(self) -> None:
        self.page.wait_for_url(re.compile(f"/user/{self.name}/lab"), timeout=240_000)
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=120_000)
        self.page.evaluate("() => window.jupyterapp.restored.then(() => true)")

    def shell(self, cmd: str, timeout_s: float = 120) -> tuple[int | None, str]:
        result = self.page.evaluate(TERMINAL, [cmd, timeout_s * 1000])
        return result["code"], re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r", "", result["out"])

    def python(self, code: str) -> str:
        return self.page.evaluate(KERNEL, code)

    def has_plugin(self, plugin: str) -> bool:
        return self.page.evaluate("(id) => window.jupyterapp.hasPlugin(id)", plugin)

    def shot(self, what: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"hub-{self.name}-{what}.png")

    # -- nbgrader's Assignment List, as a student uses it --
    def assignment_list(self):
        self.page.evaluate("() => window.jupyterapp.commands.execute('nbgrader:open-assignment-list')")
        return self.page.locator("#nbgrader-assignment-list")

    def press(self, section: str, button: str, then_section: str | None = None) -> None:
        """Press a button in the assignment's row of a section; then wait for it to show in another."""
        panel = self.assignment_list()
        row = panel.locator(f"#{section}_assignments_list .list_item", has_text=ASSIGNMENT).first
        row.locator("button", has_text=re.compile(f"^{button}$")).click()
        if then_section:
            expect_text(panel.locator(f"#{then_section}"), ASSIGNMENT)

    def validate(self, path: str) -> list[str]:
        """Open the notebook and press Validate in its toolbar; the checklist's statuses, in order."""
        self.page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
        panel = self.page.locator(".jp-NotebookPanel:visible").last
        panel.locator(".jp-Toolbar .validate-button").click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.wait_for(timeout=180_000)
        self.shot("validate")
        if not dialog.locator(".course-checklist").count():
            raise AssertionError(f"{self.name}'s Validate said: {' '.join(dialog.inner_text().split())}")
        statuses = dialog.locator(".course-checklist li").evaluate_all("lis => lis.map(li => li.dataset.status)")
        dialog.locator(".jp-Dialog-button").last.click()
        return statuses


def wait_for_files(folder: Path, pattern: str, timeout_s: float = 60) -> list[Path]:
    deadline = time.monotonic() + timeout_s
    while not any(folder.rglob(pattern)) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(0.5)  # one more look, for any that came after the first
    return sorted(folder.rglob(pattern))


def expect_text(locator, text: str, timeout_s: float = 120) -> None:
    from playwright.sync_api import expect
    expect(locator).to_contain_text(text, timeout=timeout_s * 1000)


# ---- what each student hands in ----

def submissions() -> dict[str, dict]:
    source = read_notebook(ROOT / "source" / ASSIGNMENT / NOTEBOOK)
    release = read_notebook(ROOT / "release" / ASSIGNMENT / NOTEBOOK)
    scenario = {s.student: s for s in unit01.SCENARIOS}
    return {name: build_submission(source, release, scenario[which].answers) for name, which in STUDENTS.items()}


def expected_scores(gradebook_scores: dict[str, dict[str, tuple[float, float]]]) -> dict[str, float]:
    """Each student's total if every test cell their scenario loses scores 0 and every other one full marks."""
    scenario = {s.student: s for s in unit01.SCENARIOS}
    want = {}
    for name, which in STUDENTS.items():
        loses = scenario[which].loses
        want[name] = sum(0.0 if "*" in loses or cell in loses else maximum
                         for cell, (_, maximum) in gradebook_scores[name].items())
    return want


# ---- the test ----

@pytest.fixture
def clean_machine():
    if why_not():  # only reached in CI: fail rather than pass by testing nothing
        pytest.fail(why_not(), pytrace=False)
    remove_class()  # a run killed midway leaves its class: start from nothing
    # The hub refuses to serve while its students could read the solutions (tests/hub/test_teardown.py):
    # source/ is root's alone while the class runs, as the refusal tells an instructor to make it.
    mode = (ROOT / "source").stat().st_mode & 0o777
    os.chmod(ROOT / "source", 0o700)
    try:
        yield
    finally:
        os.chmod(ROOT / "source", mode)
        remove_class()


def test_a_class_round_trip_on_a_real_hub(clean_machine, covered):
    from playwright.sync_api import sync_playwright
    started = time.monotonic()
    port = three_free_ports()
    base = f"http://127.0.0.1:{port}"
    STATE.mkdir(parents=True)
    log = ROOT / "artifacts" / "hub-test.log"  # the hub's and every server's log, for a person to read
    log.parent.mkdir(exist_ok=True)
    with open(log, "w") as out:
        hub = subprocess.Popen(
            [str(ROOT / "course"), "hub", "--instructor", INSTRUCTOR, "--students", ",".join(STUDENTS),
             "--state", str(STATE), "--exchange", str(EXCHANGE), "--ip", "127.0.0.1", "--port", str(port),
             "--assignments", ASSIGNMENT], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_for_hub(base, hub, log)
        up = time.monotonic() - started
        klass = json.loads((STATE / "class.json").read_text())
        course = Path(klass["course_root"])
        passwords = dict(line.split(":", 1) for line in (STATE / "passwords.txt").read_text().split())
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
            people = {n: Person(browser, base, n, passwords[n]) for n in class_users()}
            teacher, students = people[INSTRUCTOR], {n: people[n] for n in STUDENTS}
            for person in people.values():
                person.log_in()
            for person in people.values():
                person.ready()
            covered(f"hub up in {up:.0f} s; 4 people logged in with their own passwords, each in their own lab "
                    f"(all ready {time.monotonic() - started:.0f} s after start)")

            check_roles(teacher, students, base, covered)
            checklists = round_trip(teacher, students, course, covered)
            check_feedback_contents(students[FEEDBACK_READER], covered)
            check_isolation(teacher, students, course, covered)
            check_formgrader(teacher, base, covered)
            browser.close()
    finally:
        stopped = stop_hub(hub)
    assert stopped, f"the hub did not stop within 60 s of SIGTERM:\n{log.read_text()[-3000:]}"
    deadline = time.monotonic() + 10  # servers the hub stopped may take a moment to exit
    while (left := [p for p in their_processes() if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"left running after the hub stopped: {[(p.pid, p.name()) for p in left]}"
    listening = {c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    assert not listening & {port, port + 1, port + 2}, "something still listens on a port of the hub after it stopped"
    assert (STATE / "jupyterhub.sqlite").stat().st_mode & 0o077 == 0, "the hub's database is readable by others"
    again = time.monotonic()
    python = shutil.which("python3.11") or shutil.which("python3")  # as ./course hub picks it: the same venv
    second = subprocess.run([python, str(ROOT / "hub" / "install.py"), "--instructor", INSTRUCTOR, "--students",
                             ",".join(STUDENTS), "--state", str(STATE), "--exchange", str(EXCHANGE),
                             "--assignments", ASSIGNMENT], check=True, capture_output=True, text=True, timeout=600)
    set_up_again = time.monotonic() - again  # reported, not asserted: fast or slow, the same verdict
    # Quick because it does nothing twice: the assignment is in the gradebook already.
    assert "in the gradebook" not in second.stdout, f"a second set-up recorded the assignments again:\n{second.stdout}"
    removed = subprocess.run([str(ROOT / "course"), "hub", "--remove", "--state", str(STATE)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert removed.returncode == 0 and not STATE.exists() and not SUDOERS.exists(), removed.stderr
    assert not [n for n in class_users() if uid(n) is not None], "--remove left a user of the class"
    covered(f"the hub stopped on SIGTERM with every server and the proxy; no process or port left; "
            f"whole round trip {time.monotonic() - started:.0f} s; its database root's alone; set up again in "
            f"{set_up_again:.0f} s; ./course hub --remove took every user, the state and the sudo rule")
    check_validate(checklists, covered)


def stop_hub(hub: subprocess.Popen) -> bool:
    if hub.poll() is None:
        hub.send_signal(signal.SIGTERM)  # what Ctrl-C on ./course hub does, as JupyterHub handles both
        try:
            hub.wait(timeout=60)
        except subprocess.TimeoutExpired:
            hub.kill()
            return False
    return True


def check_roles(teacher: Person, students: dict[str, Person], base: str, covered) -> None:
    for name, student in students.items():
        assert student.has_plugin("@jupyter/nbgrader:assignment-list"), f"{name} has no Assignment List"
        assert student.has_plugin("@jupyter/nbgrader:validate-assignment"), f"{name} has no Validate button"
        for tool in ("formgrader", "create-assignment"):
            assert not student.has_plugin(f"@jupyter/nbgrader:{tool}"), f"{name}'s lab has the instructor's {tool}"
        status = student.page.request.get(f"{base}/user/{name}/formgrader").status
        assert status == 404, f"{name}'s server serves the Formgrader (HTTP {status})"
    student = next(iter(students.values()))
    student.page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    menu = student.page.locator(".lm-Menu-content")
    expect_text(menu, "Assignment List")
    assert "Formgrader" not in menu.inner_text(), "a student's Nbgrader menu offers the Formgrader"
    student.shot("menu")
    student.page.keyboard.press("Escape")
    assert teacher.has_plugin("@jupyter/nbgrader:create-assignment"), "the instructor's lab lacks Create Assignment"
    # The Formgrader opens in a tab of its own (check_formgrader): no lab panel that framing protection blanks.
    assert not teacher.has_plugin("@jupyter/nbgrader:formgrader"), "the instructor's lab frames the Formgrader"
    covered("each student's lab: Assignment List and Validate, no Formgrader (menu, plugin, server: 404), "
            "no Create Assignment; the instructor's has Create Assignment and the Formgrader in a tab of its own")


def round_trip(teacher: Person, students: dict[str, Person], course: Path, covered) -> dict:
    """The round trip; returns what each student's Validate showed (checked last, check_validate)."""
    t0 = time.monotonic()
    code, out = teacher.shell(f"cd {course} && nbgrader release_assignment {ASSIGNMENT}")
    assert code == 0, f"release failed:\n{out[-2000:]}"

    work = submissions()
    checklists = {}
    for name, student in students.items():
        student.press("released", "Fetch", "fetched_assignments_list")
        path = f"{ASSIGNMENT}/{NOTEBOOK}"
        assert Path(pwd.getpwnam(name).pw_dir, path).stat().st_uid == uid(name), "the fetched copy is not theirs"
        if STUDENTS[name] != "untouched":
            student.page.evaluate(SAVE, [path, work[name]])
        try:  # a broken Validate is reported after the rest of the round trip has been tried too
            checklists[name] = student.validate(path)
        except AssertionError as problem:
            checklists[name] = problem
            student.page.keyboard.press("Escape")
        student.press("fetched", "Submit", "submitted_assignments_list")
        student.shot("submitted")
    covered(f"release from the instructor's terminal; each student fetched, worked, pressed Validate and "
            f"submitted from the Assignment List ({time.monotonic() - t0:.0f} s)")

    t0 = time.monotonic()
    code, out = teacher.shell(f"cd {course} && nbgrader collect {ASSIGNMENT}")
    assert code == 0 and "cheating" not in out, f"collect:\n{out[-2000:]}"
    code, out = teacher.shell(f"cd {course} && sudo {STATE}/bin/course-autograde {ASSIGNMENT}", timeout_s=400)
    assert code == 0, f"course-autograde (./course autograde through sudo) failed:\n{out[-3000:]}"
    code, out = teacher.shell(f"cd {course} && nbgrader generate_feedback {ASSIGNMENT} && "
                              f"nbgrader release_feedback {ASSIGNMENT} && nbgrader export")
    assert code == 0, f"feedback or export failed:\n{out[-3000:]}"
    graded = time.monotonic() - t0
    owners = {p.owner() for p in (course / "runtime").rglob("*")}
    assert owners == {INSTRUCTOR}, f"grading left files the instructor does not own: {owners}"

    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'runtime' / 'gradebook.db'}") as gradebook:
        cells = {name: {g.name: (g.score, g.max_score) for g in gradebook.find_submission_notebook(
            NOTEBOOK.removesuffix(".ipynb"), ASSIGNMENT, name).grades} for name in STUDENTS}
    want = expected_scores(cells)
    got = {name: sum(score for score, _ in scores.values()) for name, scores in cells.items()}
    assert got == want, f"gradebook totals {got}, expected {want}"
    with open(course / "runtime" / "grades.csv") as handle:
        rows = [r for r in csv.DictReader(handle) if r["assignment"] == ASSIGNMENT]
    exported = {r["student_id"]: float(r["score"]) for r in rows}
    assert exported == want, f"grades.csv has {exported}, expected {want}"
    covered(f"collect (no ownership warning), course-autograde through sudo, feedback released, export in "
            f"{graded:.0f} s; gradebook and grades.csv: {', '.join(f'{n} {s:g}' for n, s in want.items())}")

    own_feedback = {n: (course / "runtime" / "feedback" / n / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html"))
                    .read_bytes() for n in STUDENTS}
    assert len(set(own_feedback.values())) == len(STUDENTS), "two students were given the same feedback"
    for name, student in students.items():
        student.press("submitted", "Fetch Feedback")
        fetched = wait_for_files(Path(pwd.getpwnam(name).pw_dir, ASSIGNMENT, "feedback"), "*.html")
        assert len(fetched) == 1, f"{name} fetched {len(fetched)} feedback files: {fetched}"
        assert fetched[0].read_bytes() == own_feedback[name], f"{name} fetched feedback that is not theirs"
        student.shot("feedback")
    covered("each student fetched feedback from the Assignment List: exactly one file, byte for byte their own")
    return checklists


FEEDBACK_READER, CONTENTS_ENTRY = "pthub-ben", "Q3 · Fix a dtype bug"  # the entry: out of sight at first


def check_feedback_contents(student: Person, covered) -> None:
    """As a student reads feedback: Assignment List -> (view feedback) -> the page, opened from the
    file browser in the lab's HTML viewer; a contents entry clicked there scrolls to its question.
    A link that navigated the viewer's frame to /files/ would meet frame-ancestors 'none': a blank pane."""
    from playwright.sync_api import expect
    panel = student.assignment_list()
    panel.locator("#submitted_assignments_list a", has_text="view feedback").first.click()
    student.page.locator(".jp-DirListing-item", has_text=NOTEBOOK.replace(".ipynb", ".html")).dblclick()
    viewer = student.page.locator(".jp-HTMLViewer:visible iframe")
    expect(viewer).to_have_count(1)
    frame = student.page.frame_locator(".jp-HTMLViewer:visible iframe")
    heading = frame.locator(".nbgrader_cell .panel-heading", has_text=f"Checks of {CONTENTS_ENTRY}")
    expect(heading).not_to_be_in_viewport()
    frame.locator("#toc label.jump", has_text=CONTENTS_ENTRY).click()
    expect(heading).to_be_in_viewport()
    url = viewer.element_handle().content_frame().url
    student.shot("feedback-contents-link")
    assert url.startswith("blob:"), f"the contents entry navigated the viewer's frame to {url}"
    expect(frame.locator("#toc label.jump").first).to_be_visible()  # the page, not a blank pane
    covered(f"{student.name} opened their feedback from the Assignment List in the lab's viewer and clicked "
            f"'{CONTENTS_ENTRY}' in its contents: its checks scrolled into view, the pane still shows the page")


def check_validate(checklists: dict, covered) -> None:
    broken = [str(c) for c in checklists.values() if isinstance(c, AssertionError)]
    assert not broken, "Validate did not show its checklist:\n" + "\n".join(broken)
    solved, wrong, untouched = (checklists[n] for n in STUDENTS)
    assert solved and set(solved) == {"passed", "answered"}, f"Validate on the solution: {solved}"
    assert not {"passed", "answered"} & set(untouched), f"Validate on the untouched release: {untouched}"
    assert len(wrong) == len(solved) and "unanswered" not in wrong, f"Validate on a wrong answer: {wrong}"
    covered(f"Validate's checklist: solution {solved.count('passed')} passed, {solved.count('answered')} answered; "
            f"wrong answer {wrong.count('passed')} passed; untouched none passed or answered")


def check_isolation(teacher: Person, students: dict[str, Person], course: Path, covered) -> None:
    course_id = json.loads((STATE / "class.json").read_text()).get("course_id") or "pytorch-fundamentals"
    shared = [str(EXCHANGE / course_id / "inbound"), str(EXCHANGE / course_id / "feedback")]
    instructors = [str(course), str(course / "source" / ASSIGNMENT / NOTEBOOK), str(course / "runtime" / "gradebook.db"),
                   str(course / "runtime" / "submitted")]
    for path in shared + instructors:
        assert Path(path).exists(), f"nothing to try: {path} does not exist"
    for name, student in students.items():
        others = [str(Path(pwd.getpwnam(o).pw_dir, ASSIGNMENT, NOTEBOOK)) for o in STUDENTS if o != name]
        targets = others + instructors + shared
        mine = str(Path(pwd.getpwnam(name).pw_dir, ASSIGNMENT, NOTEBOOK))
        probe = " ".join(f"'{t}'" for t in [mine, *targets])
        code, out = student.shell(
            f"for p in {probe}; do err=$(if [ -d \"$p\" ]; then ls \"$p\"; else head -c 1 \"$p\"; fi 2>&1 >/dev/null); "
            f"rc=$?; case \"$err\" in *'Permission denied'*) why=denied;; *) why=other;; esac; "
            f"echo \"READ=$rc=$why=$p\"; done")
        results = {p: (int(rc), why) for rc, why, p in re.findall(r"READ=(\d+)=(\w+)=(\S+)", out)}
        assert results.get(mine, (1,))[0] == 0, f"{name} cannot read their own notebook from their terminal:\n{out[-1500:]}"
        leaks = [t for t in targets if results.get(t, (0, ""))[1] != "denied" or results[t][0] == 0]
        assert not leaks, f"{name}'s terminal could read (or did not try): {leaks}\n{out[-1500:]}"
        out = student.python(
            "import os\n"
            f"for p in {[mine, *targets]!r}:\n"
            "    try:\n"
            "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
            "        print('READ', p)\n"
            "    except PermissionError:\n"
            "        print('DENIED', p)\n")
        assert f"READ {mine}" in out, f"{name}'s kernel cannot read their own notebook:\n{out}"
        leaks = [t for t in targets if f"DENIED {t}" not in out]
        assert not leaks, f"{name}'s kernel could read (or did not try): {leaks}\n{out}"
    covered(f"from each student's terminal and kernel: their own notebook readable; other students' work, the "
            f"instructor's course folder, its solutions, gradebook and submitted/, the exchange's inbound and "
            f"feedback listings all denied ({len(targets)} paths each)")


def check_formgrader(teacher: Person, base: str, covered) -> None:
    """Clicked in the lab: Course -> Formgrader opens the instructor's Formgrader in a browser tab."""
    teacher.page.locator(".lm-MenuBar-itemLabel", has_text="Course").click()
    with teacher.context.expect_page() as opened:
        teacher.page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text="Formgrader").click()
    page = opened.value
    page.wait_for_url(re.compile(f"/user/{INSTRUCTOR}/formgrader"))
    expect_text(page.locator("body"), ASSIGNMENT)  # the Formgrader's assignments, not a refusal
    page.screenshot(path=SCREENSHOTS / "hub-formgrader-from-the-lab.png")
    page.goto(f"{base}/user/{INSTRUCTOR}/formgrader/manage_submissions/{ASSIGNMENT}")
    table = page.locator("table")
    for name in STUDENTS:
        expect_text(table, name)
    page.screenshot(path=SCREENSHOTS / "hub-formgrader-submissions.png")
    covered(f"Course -> Formgrader clicked in the instructor's lab opens it in a tab of its own; it lists the "
            f"submissions of {', '.join(STUDENTS)}")
