"""A class on a real JupyterHub on this machine, set up as docs/hub.md says (`sudo ./course hub`,
with Debian's own python3 first on PATH), from a copy of this checkout kept as an instructor keeps
theirs (root's alone): an instructor and three students, each a real system user with their own
JupyterLab, each driven in their own headless Chromium session (Debian's, through Playwright):

the instructor releases 01_tensors; each student logs in with their password and their lab opens
on their course: lesson 01 (their own copy, pulled by nbgitpuller) on the left and their fetched
01_tensors on the right; one runs the lesson, its dtype explorer answers a new dtype, and they note
something in a code cell; each works (the solution, a wrong answer, nothing), validates and
submits from the Assignment List; the instructor
collects, grades with `course-autograde` (./course autograde, sandboxed, as root through sudo),
makes and releases feedback and exports; each student fetches feedback and gets exactly their own,
and one opens it from the Assignment List and clicks a contents entry: the lab's viewer scrolls to the
question, its pane not blanked by the servers' frame-ancestors 'none'.
Then: the gradebook and the export hold every student's right score; no student can read another's
work, the instructor's course folder, the gradebook or the exchange's submissions, tried from their
own terminal and their own kernel; a student's lab has no instructor tools and the instructor's
Formgrader lists the submissions; the instructor corrects lesson 01 in the checkout and publishes
(`sudo ./course hub --publish`), and the student's pull link brings the correction into their copy,
their own note kept; the hub stops and leaves no process behind.

The users (pthub-*) are made for the test and removed after it, with everything they ran.
Skipped, saying why, when not root or without Chromium; in CI (CI=true) it fails instead."""
import contextlib
import csv
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from browserkit import CHROMIUM, IN_CI, launch
from coursekit import ROOT, build_submission, machine_held, read_notebook
from scenarios import unit01

STATE = Path("/srv/pytorch-course-hubtest")
EXCHANGE = STATE / "exchange"
SUDOERS = Path("/etc/sudoers.d/course-hub-pytorch-course-hubtest")  # hub/install.py's sudoers_file(STATE)
INSTRUCTOR = "pthub-teacher"
# Each student does one scenario of unit 01 (tests/scenarios/unit01.py, which says what it loses).
STUDENTS = {"pthub-ana": "solution", "pthub-ben": "len_as_numel", "pthub-cleo": "untouched"}
ASSIGNMENT, NOTEBOOK = unit01.ASSIGNMENT, unit01.NOTEBOOK
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
HUB_UP_S = 600  # the first run on a machine builds the hub's environment (torch and all)
LESSON = "01_tensors_lesson.ipynb"
LESSON_READER = "pthub-ana"  # runs lesson 01, turns its widget, notes something, pulls the correction
OWN_NOTE = "# ana's own note: the dtype decides the bytes"
CORRECTION = "**Corrected by the instructor:** published to every student's copy."
# As docs/hub.md runs it: under sudo, whose PATH puts Debian's python3 (older than the pins allow) first.
DEBIAN_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


def why_not() -> str:
    if os.geteuid() != 0:
        return "the hub test makes system users and serves them: run it as root"
    if not CHROMIUM.exists():
        return (f"the hub test needs Debian's Chromium at {CHROMIUM}: "
                "apt-get install -y --no-install-recommends chromium")
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
        with contextlib.suppress(OSError, ValueError, psutil.NoSuchProcess):
            found.append(psutil.Process(int(pid_file.read_text())))
    return found


def remove_class() -> None:
    """Everything a run made: processes (each by pid), users (only those the hub recorded making), files."""
    for proc in their_processes():
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(their_processes(), timeout=10)
    record = STATE / "class.json"
    made = json.loads(record.read_text()).get("made", []) if record.exists() else []
    for name in class_users():
        if name in made and uid(name) is not None:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
    shutil.rmtree(STATE, ignore_errors=True)
    SUDOERS.unlink(missing_ok=True)


def ensure_sudo() -> None:
    """Debian's sudo, as the docs' commands use it (the test runs as root: apt-get may install it)."""
    if shutil.which("sudo"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "sudo"], env=env,
                      capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=True)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "sudo"], env=env,
                       capture_output=True, check=True)


def private_checkout() -> Path:
    """A copy of this checkout as an instructor keeps theirs, where no student may enter (mkdtemp:
    0700): the working tree's files (tracked, and new ones git does not ignore), .venv linked. The
    instructor's correction is made in it, never in this tree."""
    copy = Path(tempfile.mkdtemp(prefix="pthub-checkout-"))
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


def sudo_course(checkout: Path, *args: str, **kw):
    """`sudo ./course ARGS` in the checkout, as the docs say it, with Debian's Python first on PATH."""
    return ["sudo", str(checkout / "course"), *args], dict(cwd=checkout, env=dict(os.environ, PATH=DEBIAN_PATH), **kw)


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

# The student's work written into their notebook, and the copy open in their lab (the start page
# shows it) reloaded from disk, as File -> Reload Notebook from Disk does.
SAVE = """async ([path, nb]) => {
  await window.jupyterapp.serviceManager.contents.save(path, {type: 'notebook', format: 'json', content: nb});
  for (const w of Array.from(window.jupyterapp.shell.widgets('main')))
    if (w.context && w.context.path === path) await w.context.revert();
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
        dialogs = self.page.locator(".jp-Dialog")
        if dialogs.count():  # it would take the click: say what it says instead of timing out behind it
            raise AssertionError(f"{self.name}: before {button}, a dialog is open: "
                                 f"{' '.join(dialogs.first.inner_text().split())}")
        row = panel.locator(f"#{section}_assignments_list .list_item", has_text=ASSIGNMENT).first
        row.locator("button", has_text=re.compile(f"^{button}$")).click()
        if then_section:
            expect_text(panel.locator(f"#{then_section}"), ASSIGNMENT)

    def validate(self, path: str) -> list[str]:
        """Open the notebook and press Validate in its toolbar; the checklist's statuses, in order."""
        # The panel of that very notebook: the lesson beside it has a Validate button too.
        panel_id = self.page.evaluate(
            "(path) => window.jupyterapp.commands.execute('docmanager:open', {path}).then(w => w.id)", path)
        panel = self.page.locator(f'[id="{panel_id}"]')
        panel.locator(".jp-Toolbar .validate-button").click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.wait_for(timeout=180_000)
        self.shot("validate")
        said = " ".join(dialog.inner_text().split())
        statuses = dialog.locator(".course-checklist li").evaluate_all("lis => lis.map(li => li.dataset.status)")
        # Closed by its button whatever it says: Escape reaches a dialog only when it holds the focus.
        dialog.locator(".jp-Dialog-button").last.click()
        dialog.wait_for(state="detached")
        if not statuses:
            raise AssertionError(f"{self.name}'s Validate said: {said}")
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
    with machine_held():  # installing sudo adds its own files in /etc/sudoers.d
        remove_class()  # a run killed midway leaves its class: start from nothing
        ensure_sudo()
    # The hub refuses to serve while its students could read the solutions (tests/hub/test_install.py):
    # the checkout is root's alone, as the refusal tells an instructor to make it.
    checkout = private_checkout()
    try:
        yield checkout
    finally:
        with machine_held():
            remove_class()
        shutil.rmtree(checkout, ignore_errors=True)


def test_a_class_round_trip_on_a_real_hub(clean_machine, covered):
    from playwright.sync_api import sync_playwright
    checkout = clean_machine
    started = time.monotonic()
    port = three_free_ports()
    base = f"http://127.0.0.1:{port}"
    # The set-up makes the class's users, folders and sudo rule: held until the hub is up (machine_held).
    setting_up = contextlib.ExitStack()
    setting_up.enter_context(machine_held())
    STATE.mkdir(parents=True)
    log = ROOT / "artifacts" / "hub-test.log"  # the hub's and every server's log, for a person to read
    log.parent.mkdir(exist_ok=True)
    debian = subprocess.run(["sudo", "python3", "-c", "import sys; print(*sys.version_info[:3], sep='.')"],
                            env=dict(os.environ, PATH=DEBIAN_PATH), capture_output=True, text=True).stdout.strip()
    with open(log, "w") as out:
        cmd, kw = sudo_course(checkout, "hub", "--instructor", INSTRUCTOR, "--students", ",".join(STUDENTS),
                              "--state", str(STATE), "--exchange", str(EXCHANGE), "--ip", "127.0.0.1",
                              "--port", str(port), "--assignments", ASSIGNMENT, stdout=out, stderr=subprocess.STDOUT)
        hub = subprocess.Popen(cmd, **kw)
    try:
        wait_for_hub(base, hub, log)
        setting_up.close()
        up = time.monotonic() - started
        said = [line for line in log.read_text().splitlines() if line.startswith("course hub: ")]
        covered(f"sudo ./course hub (python3 under sudo: {debian}) set up and served in {up:.0f} s, "
                f"saying {len(said)} progress lines, first: {said[0] if said else None!r}")
        klass = json.loads((STATE / "class.json").read_text())
        course = Path(klass["course_root"])
        release_first_assignment(course, klass)
        passwords = dict(line.split(":", 1) for line in (STATE / "passwords.txt").read_text().split())
        with sync_playwright() as pw:
            browser = launch(pw)
            people = {n: Person(browser, base, n, passwords[n]) for n in class_users()}
            teacher, students = people[INSTRUCTOR], {n: people[n] for n in STUDENTS}
            for person in people.values():
                person.log_in()
            for person in people.values():
                person.ready()
            covered(f"4 people logged in with their own passwords, each in their own lab "
                    f"(all ready {time.monotonic() - started:.0f} s after start)")

            check_start_pages(students, covered)
            check_roles(teacher, students, base, covered)
            check_lesson(students[LESSON_READER], covered)
            checklists = round_trip(teacher, students, course, covered)
            check_feedback_contents(students[FEEDBACK_READER], covered)
            check_isolation(teacher, students, course, covered)
            check_formgrader(teacher, base, covered)
            check_correction(students[LESSON_READER], checkout, base, covered)
            browser.close()
    finally:
        setting_up.close()
        stopped = stop_hub(hub)
    assert stopped, f"the hub did not stop within 60 s of SIGTERM:\n{log.read_text()[-3000:]}"
    deadline = time.monotonic() + 10  # servers the hub stopped may take a moment to exit
    while (left := [p for p in their_processes() if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"left running after the hub stopped: {[(p.pid, p.name()) for p in left]}"
    listening = {c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    assert not listening & {port, port + 1, port + 2}, "something still listens on a port of the hub after it stopped"
    assert (STATE / "jupyterhub.sqlite").stat().st_mode & 0o077 == 0, "the hub's database is readable by others"
    with machine_held():
        again = time.monotonic()
        # The set-up alone (install.py), run again as the docs' sudo runs it: Debian's python3, which
        # picks .venv's Python by path, so the same environment, nothing rebuilt.
        second = subprocess.run(["sudo", "python3", str(checkout / "hub" / "install.py"), "--instructor", INSTRUCTOR,
                                 "--students", ",".join(STUDENTS), "--state", str(STATE), "--exchange", str(EXCHANGE),
                                 "--assignments", ASSIGNMENT], env=dict(os.environ, PATH=DEBIAN_PATH), check=True,
                                capture_output=True, text=True, timeout=600)
        set_up_again = time.monotonic() - again  # reported, not asserted: fast or slow, the same verdict
        cmd, kw = sudo_course(checkout, "hub", "--remove", "--state", str(STATE),
                              capture_output=True, text=True, timeout=120)
        removed = subprocess.run(cmd, **kw)
    # Quick because it does nothing twice: the assignment is in the gradebook already.
    assert "in the gradebook" not in second.stdout, f"a second set-up recorded the assignments again:\n{second.stdout}"
    assert "building" not in second.stdout, f"a second set-up rebuilt the environment:\n{second.stdout}"
    assert removed.returncode == 0 and not STATE.exists() and not SUDOERS.exists(), removed.stderr
    assert not [n for n in class_users() if uid(n) is not None], "--remove left a user of the class"
    covered(f"the hub stopped on SIGTERM with every server and the proxy; no process or port left; "
            f"whole round trip {time.monotonic() - started:.0f} s; its database root's alone; set up again in "
            f"{set_up_again:.0f} s; ./course hub --remove took every user, the state and the sudo rule")
    check_validate(checklists, covered)


def release_first_assignment(course: Path, klass: dict) -> None:
    """The instructor releases 01_tensors before the class logs in (nbgrader, as them): then each
    student's start fetches it and opens it beside lesson 01."""
    home = pwd.getpwnam(INSTRUCTOR).pw_dir
    env = {"PATH": f"{klass['venv']}/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"}
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    done = subprocess.run([runuser, "-u", INSTRUCTOR, "--", "nbgrader", "release_assignment", ASSIGNMENT],
                          cwd=course, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"release failed:\n{done.stderr[-2000:]}"


# The notebooks in the lab's main area: path, left edge, shown, and drawn (loaded, its first
# heading rendered: what a student reads, not the lab's "Initializing" placeholder).
MAIN_NOTEBOOKS = """() => Array.from(window.jupyterapp.shell.widgets('main')).filter(w => w.context)
    .map(w => ({path: w.context.path, left: w.node.getBoundingClientRect().left, shown: w.isVisible,
                drawn: w.context.isReady && w.node.querySelector('.jp-RenderedMarkdown h1') !== null}))"""


def check_start_pages(students: dict[str, Person], covered) -> None:
    """Each student's lab opens on lesson 01 (left) and their own 01_tensors (right), side by side."""
    want = [f"lessons/{LESSON}", f"{ASSIGNMENT}/{NOTEBOOK}"]
    for name, student in students.items():
        student.page.wait_for_function(f"() => ({MAIN_NOTEBOOKS})().length >= 2", timeout=60_000)
        # The screenshot shows the pages as the student reads them, once both are drawn.
        student.page.wait_for_function(f"() => ({MAIN_NOTEBOOKS})().filter(w => w.shown && w.drawn).length >= 2",
                                       timeout=120_000)
        shown = sorted((w for w in student.page.evaluate(MAIN_NOTEBOOKS) if w["shown"]), key=lambda w: w["left"])
        assert [w["path"] for w in shown] == want, f"{name}'s lab opened on {shown}"
        home = Path(pwd.getpwnam(name).pw_dir)
        for path in want:
            assert (home / path).stat().st_uid == uid(name), f"{name}'s {path} is not their own copy"
        # Their file browser shows their work, not the settings the hub wrote in their home.
        listed = student.page.locator(".jp-DirListing-itemText").all_inner_texts()
        assert {"lessons", ASSIGNMENT} <= set(listed) and "nbgrader_config.py" not in listed, listed
        assert (home / "nbgrader_config.py").exists()
        student.shot("start-page")
    covered(f"each student's lab opened on {want[0]} (left) and {want[1]} (right), their own copies in their home")


def check_lesson(student: Person, covered) -> None:
    """The lesson runs in the student's kernel (it imports utils), its dtype explorer answers a new
    dtype, and the student notes something in a code cell and saves."""
    from playwright.sync_api import expect
    path = f"lessons/{LESSON}"
    panel_id = student.page.evaluate("p => window.jupyterapp.commands.execute('docmanager:open', {path: p})"
                                     ".then(w => w.id)", path)
    panel = student.page.locator(f'[id="{panel_id}"]')
    t0 = time.monotonic()
    student.page.evaluate("""() => { window.runAll = 'running';
        window.jupyterapp.commands.execute('notebook:run-all-cells')
            .then(ok => { window.runAll = ok ? 'done' : 'stopped'; }, e => { window.runAll = String(e); }); }""")
    student.page.wait_for_function("window.runAll !== 'running'", timeout=300_000)
    errors = student.page.evaluate("""() => Array.from(window.jupyterapp.shell.currentWidget.content.model.cells)
        .flatMap(c => c.type === 'code' ? c.outputs.toJSON() : []).filter(o => o.output_type === 'error')
        .map(o => `${o.ename}: ${o.evalue}`)""")
    assert not errors, f"lesson 01 in {student.name}'s kernel: {errors[:3]}"
    ran = time.monotonic() - t0
    # The widget's output (the lesson also shows the explorer's table as plain HTML), as tests/browser finds it.
    explorer = panel.locator(".jp-OutputArea-output").filter(
        has=student.page.locator("table.dtype-explorer:is(.jupyter-widgets, .jupyter-widgets *)"))
    expect(explorer).to_have_count(1, timeout=60_000)
    explorer.get_by_label("dtype", exact=True).select_option(label="int8")
    expect(explorer.locator('table[data-dtype="int8"]')).to_be_attached(timeout=60_000)
    explorer.scroll_into_view_if_needed()
    student.shot("lesson-widget")
    # Their own note, typed at the top of the first code cell, and saved.
    panel.locator(".jp-CodeCell .cm-content").first.click()
    student.page.keyboard.press("Control+Home")
    student.page.keyboard.type(OWN_NOTE)
    student.page.keyboard.press("Enter")
    student.page.keyboard.press("Control+s")
    saved = Path(pwd.getpwnam(student.name).pw_dir, path)
    deadline = time.monotonic() + 30
    while OWN_NOTE not in saved.read_text() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert OWN_NOTE in saved.read_text(), f"{student.name}'s note did not reach their lesson copy"
    covered(f"{student.name} ran lesson 01 in their kernel (no error, {ran:.0f} s), its dtype explorer answered "
            "int8, and their note in the first code cell was saved to their copy")


def check_correction(student: Person, checkout: Path, base: str, covered) -> None:
    """The instructor corrects a markdown cell of lesson 01 in their checkout and publishes; the
    student's pull link (docs/hub.md) merges it into their copy, which keeps their own note."""
    from playwright.sync_api import expect
    lesson = checkout / "notebooks" / LESSON
    nb = json.loads(lesson.read_text())
    markdown = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    target = markdown[len(markdown) // 2]  # far from the first code cell, where the student's note is
    target["source"] = ["".join(target["source"]).rstrip("\n") + "\n", "\n", CORRECTION]
    lesson.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    cmd, kw = sudo_course(checkout, "hub", "--publish", "--state", str(STATE), capture_output=True, text=True,
                          timeout=300)
    published = subprocess.run(cmd, **kw)
    assert published.returncode == 0 and "published as" in published.stdout, published.stdout + published.stderr
    # The link --publish prints, as the instructor hands it to the class.
    [link] = re.findall(r"(/hub/user-redirect/git-pull\S+)", published.stdout)
    student.page.on("dialog", lambda dialog: dialog.accept())  # leaving the lab: no "stay on this page?"
    student.page.goto(base + link)
    student.ready()
    mine = Path(pwd.getpwnam(student.name).pw_dir, "lessons", LESSON).read_text()
    assert CORRECTION in mine, f"the correction did not reach {student.name}'s copy"
    assert OWN_NOTE in mine, f"the pull lost {student.name}'s own note"
    # The lab shows it too: the lesson, reopened from disk, scrolled to the corrected cell.
    student.page.wait_for_function(f"() => ({MAIN_NOTEBOOKS})().some(w => w.path === 'lessons/{LESSON}')",
                                   timeout=60_000)
    index = student.page.evaluate("""async ([path, marker]) => {
        const panel = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context?.path === path);
        await panel.context.ready;  // its cells read from disk
        window.jupyterapp.shell.activateById(panel.id);  // its tab in front of the others in its area
        const nb = panel.content;
        const i = Array.from(nb.model.cells).findIndex(c => c.sharedModel.getSource().includes(marker));
        nb.activeCellIndex = i;
        return nb.scrollToItem(i).then(() => i); }""", [f"lessons/{LESSON}", CORRECTION])
    assert index >= 0, f"the lesson open in {student.name}'s lab has no corrected cell"
    cell = student.page.locator(".jp-MarkdownCell", has_text="Corrected by the instructor").first
    cell.scroll_into_view_if_needed(timeout=60_000)
    expect(cell).to_be_in_viewport(timeout=60_000)
    student.shot("lesson-corrected")
    covered(f"the instructor corrected lesson 01 in the checkout, `sudo ./course hub --publish` published it; "
            f"{student.name}'s pull link merged it into their copy, their own note kept")


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
    work = submissions()
    checklists = {}
    for name, student in students.items():
        # Fetched at their server's start (hub/user_start.py), as the Assignment List's Fetch does.
        expect_text(student.assignment_list().locator("#fetched_assignments_list"), ASSIGNMENT)
        path = f"{ASSIGNMENT}/{NOTEBOOK}"
        assert Path(pwd.getpwnam(name).pw_dir, path).stat().st_uid == uid(name), "the fetched copy is not theirs"
        if STUDENTS[name] != "untouched":
            student.page.evaluate(SAVE, [path, work[name]])
        try:  # a broken Validate is reported after the rest of the round trip has been tried too
            checklists[name] = student.validate(path)
        except AssertionError as problem:
            checklists[name] = problem
        student.press("fetched", "Submit", "submitted_assignments_list")
        student.shot("submitted")
    covered(f"each student's Assignment List shows 01_tensors fetched (their own copy); each worked, pressed "
            f"Validate and submitted from it ({time.monotonic() - t0:.0f} s)")

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
    instructors = [str(course), str(course / "source" / ASSIGNMENT / NOTEBOOK),
                   str(course / "runtime" / "gradebook.db"), str(course / "runtime" / "submitted")]
    for path in shared + instructors:
        assert Path(path).exists(), f"nothing to try: {path} does not exist"
    for name, student in students.items():
        others = [str(Path(pwd.getpwnam(o).pw_dir, ASSIGNMENT, NOTEBOOK)) for o in STUDENTS if o != name]
        targets = others + instructors + shared
        mine = str(Path(pwd.getpwnam(name).pw_dir, ASSIGNMENT, NOTEBOOK))
        probe = " ".join(f"'{t}'" for t in [mine, *targets])
        _code, out = student.shell(
            f"for p in {probe}; do err=$(if [ -d \"$p\" ]; then ls \"$p\"; else head -c 1 \"$p\"; fi 2>&1 >/dev/null); "
            f"rc=$?; case \"$err\" in *'Permission denied'*) why=denied;; *) why=other;; esac; "
            f"echo \"READ=$rc=$why=$p\"; done")
        results = {p: (int(rc), why) for rc, why, p in re.findall(r"READ=(\d+)=(\w+)=(\S+)", out)}
        assert results.get(mine, (1,))[0] == 0, (
            f"{name} cannot read their own notebook from their terminal:\n{out[-1500:]}")
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
