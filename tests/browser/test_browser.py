"""The course as a student and an instructor see it: a real JupyterLab driven by headless Chromium
(Debian's, through Playwright), started the way ./course lab starts it. Every lesson and every solved
assignment runs top to bottom without an error output, every widget renders with its data and answers
to input (each fitting its pane, or scrolling inside itself, with the lesson on the left and an
assignment on the right as the lab's start page has them, in a laptop's window), Run All
on an untouched assignment reaches every exercise, the Validate button shows its checklist (solved,
half-done, untouched), a student's lab has no instructor panels and an instructor's has them, the
Assignment List fetches into work/ (which then holds nothing but assignments), the feedback page names
every question, and its contents entries, clicked in the lab's own HTML viewer, scroll to their question
without reloading the pane. Screenshots land in artifacts/screenshots/ for a person to look at.

One server per role, one browser, one notebook at a time: about 4 minutes on 2 cores."""
import contextlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import (
    Error as PlaywrightError,
    TimeoutError as PlaywrightTimeoutError,
    expect,
    sync_playwright,
)

from browserkit import FIT_WIDTH, SKIP_WITHOUT_CHROMIUM, launch, needs_chromium
from coursekit import (
    LAB_TOKEN as TOKEN,
    LESSONS,
    ROOT,
    SOURCE_NOTEBOOKS,
    build_submission,
    nbgrader,
    read_notebook,
    running_lab,
    write_notebook,
)

SCREENSHOTS = ROOT / "artifacts" / "screenshots"
WIDGET_VIEW = ".jp-OutputArea-output > .jupyter-widgets:not(.jupyter-widgets-error-widget)"  # a drawn widget
PAGE_ERRORS: list[str] = []  # uncaught exceptions in the page: a widget's front end that broke
KERNEL_S, RUN_ALL_S, WIDGET_S, VALIDATE_S = 60, 180, 30, 180  # lessons run in 5-10 s; CI is slower
# The lab loads nbgrader on its panels' first request, not at start: seconds on a quiet machine,
# over 30 s with every core busy; a bound for a hang, not for speed.
NBGRADER_S = 180
SPLIT_BESIDE = "untouched/01_tensors/01_tensors.ipynb"  # what a lesson opens beside, as the start page does

pytestmark = [SKIP_WITHOUT_CHROMIUM, pytest.mark.early(7)]


@pytest.fixture(scope="module", autouse=True)
def chromium_in_ci():
    needs_chromium()  # before starting a server


# ---- what each notebook's widgets must show: the one place to add a lesson's widget ----

@dataclass(frozen=True)
class Step:
    """Do one thing to a widget (nothing for the first step), then every selector in `expect` must
    match inside the widget. Each step expects what the step before ruled out, so a passing step is a
    change of view; and since the HTML is recomputed by Python observers, a change the kernel made."""
    do: tuple[str, str, str] | None  # ("fill" | "select", the control's label, text or option),
    #   ("check" | "uncheck", a checkbox's label, ""), or ("click", a selector inside the widget, "")
    expect: tuple[str, ...]  # empty only for a step that sets a control the next step acts on


@dataclass(frozen=True)
class Widget:
    name: str   # for messages
    hook: str   # CSS that, after run-all, only this widget's output matches, on the widget or inside it (static
    #             HTML of the same table doesn't count); that output is kept for every step, even if a step
    #             changes what the hook matched
    steps: tuple[Step, ...]
    shows: str = ""  # CSS of the elements a failure quotes (their data- attributes); the hook's by default
    fits: bool = True  # after every step, nothing in the widget runs past its pane at the lab's default split


WIDGETS: dict[str, list[Widget]] = {  # lab path -> its widgets; notebooks not here get the no-error check
    "lessons/01_tensors_lesson.ipynb": [Widget("dtype-explorer", "table.dtype-explorer", (
        Step(None, ('table[data-value="2049.0"][data-dtype="float16"][data-count="1000"]',
                    'tr[data-dtype="float16"][data-stored="2048.0"][data-selected="true"]')),
        Step(("fill", "value", "0.1"), ('table[data-value="0.1"]',
                                        'tr[data-dtype="float16"][data-stored="0.0999755859375"]')),
        Step(("select", "dtype", "int8"), ('table[data-dtype="int8"]',
                                           'tr[data-dtype="int8"][data-selected="true"][data-stored="0"]')),
        Step(("fill", "elements", "10"), ('table[data-count="10"]', 'tr[data-dtype="int8"][data-total-bytes="10"]')),
        # the rest of what the lesson invites: "65504 then 65520 in float16; 300 in int8; -2.7 in the
        # integers; 1e-8; 7,000,000,000 elements"
        Step(("select", "dtype", "float16"), ('table[data-dtype="float16"]',)),
        Step(("fill", "value", "65504"), ('tr[data-dtype="float16"][data-stored="65504.0"]',)),
        Step(("fill", "value", "65520"), ('tr[data-dtype="float16"][data-stored="inf"]',)),
        Step(("select", "dtype", "int8"), ()),
        Step(("fill", "value", "300"), ('tr[data-dtype="int8"][data-stored="None"][data-selected="true"]',)),
        Step(("fill", "value", "-2.7"), ('tr[data-dtype="int8"][data-stored="-2"]',)),
        Step(("fill", "value", "1e-8"), ('tr[data-dtype="float16"][data-stored="0.0"]',)),
        Step(("fill", "elements", "7000000000"), ('table[data-count="7000000000"]',)),
    ))],
    "lessons/03_broadcasting_views_lesson.ipynb": [
        Widget("broadcast-explorer", "table.broadcast-explorer", (
            Step(None, ('table[data-a="8, 1"][data-b="8"][data-result="8, 8"][data-ok="true"]',)),
            Step(("fill", "shape a", "2, 1"), ('table[data-result="2, 8"]', 'p.broadcast-result[data-result="2, 8"]')),
            Step(("fill", "shape b", "3, 4"), ('table[data-ok="false"]', 'p.broadcast-error[data-error="The size of '
                                               'tensor a (2) must match the size of tensor b (3) at non-singleton '
                                               'dimension 0"]')),
        )),
        Widget("storage-explorer", "div.storage-explorer", (
            Step(None, ('div[data-view="t[1]"][data-touched="4,5,6,7"][data-shares="true"]',)),
            Step(("select", "view", "t.T"), ('div[data-view="t.T"][data-touched="0,4,8,1,5,9,2,6,10,3,7,11"]'
                                             '[data-contiguous="false"][data-shares="true"]',)),
            Step(("select", "view", "t.clone()"), ('div[data-view="t.clone()"][data-shares="false"]',
                                                   'table.storage-row[data-storage="own"]')),
        )),
    ],
    # Three graph explorers: of a tensor (no inputs to tick), of the two-layer network, of the branchy function.
    "lessons/04_autograd_lesson.ipynb": [
        Widget("graph-explorer of a tensor", ".graph-explorer:not(:has(.widget-hbox))", (
            Step(None, ('svg.autograd-graph[data-nodes="8"][data-saved-bytes="48"]',
                        '.graph-details[data-node-id=""]')),
            Step(("click", 'g.node[data-kind="saved"]', ""), ('.graph-details[data-node-id="n4"][data-kind="saved"]',)),
        ), shows="svg.autograd-graph, p.graph-summary, .graph-details"),
        Widget("graph-explorer of the network", '.graph-explorer:has(span[title="W1"])', (
            # the lesson itself ticked W1 and b1 off and on again, then selected n0 from Python
            Step(None, ('svg.autograd-graph[data-nodes="21"][data-leaves="4"]', 'g.node[data-label="W1 (4, 8)"]',
                        '.graph-details[data-node-id="n0"][data-kind="op"]')),
            Step(("click", 'g.node[data-label="W1 (4, 8)"]', ""), ('.graph-details[data-node-id="n20"]'
                                                                    '[data-kind="leaf"]',)),
            Step(("uncheck", "W1", ""), ('svg.autograd-graph[data-nodes="17"][data-leaves="3"]'
                                         ':not(:has(g.node[data-label="W1 (4, 8)"]))',
                                         'p.graph-summary[data-nodes="17"][data-saved-bytes="608"]',
                                         '.graph-details[data-node-id=""]')),  # a new drawing drops the selection
        ), shows="svg.autograd-graph, p.graph-summary, .graph-details"),
        Widget("graph-explorer of a branch", ".graph-explorer:has(.widget-toggle-buttons)", (
            Step(None, ('g.node[data-label="MeanBackward0"]', 'g.node[data-label="PowBackward0"]')),  # set from Python
            Step(("click", 'button:text-is("x = [3, 1]")', ""), ('g.node[data-label="SumBackward0"]',
                                                                  'g.node[data-label="ReluBackward0"]')),
            Step(("uncheck", "w", ""), ('svg.autograd-graph[data-nodes="0"]', 'p.graph-summary[data-nodes="0"]')),
        ), shows="svg.autograd-graph, p.graph-summary, g.node"),
    ],
    # Two memory monitors, told apart by their iteration counts after run-all: the evaluation pair (60), the
    # training pair (40). Each is run again with fewer iterations: the box alone redraws nothing, Run does.
    "lessons/05_no_grad_lesson.ipynb": [
        Widget("memory-monitor, evaluation", 'div.memory-monitor[data-planned="60"]', (
            Step(None, ('div.memory-monitor[data-iterations="60"][data-running="false"]',
                        # 165,888 more bytes and 7 more nodes every iteration (and 512 B, 4 nodes to start)
                        '[data-series="buggy"][data-last-bytes="9953792"][data-last-nodes="424"]',
                        '[data-series="fixed"][data-last-bytes="0"][data-last-nodes="0"]')),
            Step(("fill", "iterations", "20"), ()),
            Step(("click", 'button:text-is("Run")', ""), (
                'div.memory-monitor[data-iterations="20"][data-planned="20"][data-running="false"]',
                '[data-series="buggy"][data-iterations="20"][data-last-bytes="3318272"][data-last-nodes="144"]',
                '[data-series="fixed"][data-iterations="20"][data-last-bytes="0"][data-last-nodes="0"]')),
        ), shows="div.memory-monitor, [data-series]"),
        Widget("memory-monitor, training", 'div.memory-monitor[data-planned="40"]', (
            Step(None, ('div.memory-monitor[data-iterations="40"][data-running="false"]',
                        '[data-series="buggy"][data-last-bytes="0"][data-last-nodes="284"]',  # nodes grow, bytes don't
                        '[data-series="fixed"][data-last-bytes="0"][data-last-nodes="10"]')),
            Step(("fill", "iterations", "10"), ()),
            Step(("click", 'button:text-is("Run")', ""), (
                'div.memory-monitor[data-iterations="10"][data-planned="10"][data-running="false"]',
                '[data-series="buggy"][data-iterations="10"][data-last-bytes="0"][data-last-nodes="74"]')),
        ), shows="div.memory-monitor, [data-series]"),
    ],
    "lessons/06_modules_lesson.ipynb": [Widget("module-inspector", 'div.module-inspector[data-class="Zoo"]', (
        Step(None, ('div.module-inspector[data-training="true"][data-devices="cpu"]',
                    'tr[data-name="window"][data-kind="buffer"][data-saved="false"]',
                    'tr[data-name="scale"][data-kind="unregistered"][data-saved="false"][data-device="cpu"]')),
        Step(("select", "mode", ".eval()"), ('div.module-inspector[data-training="false"]',
                                             'li.module-node[data-module="encoder"][data-training="false"]',
                                             # inside the plain list: .eval() never reaches it
                                             'li.hidden-module[data-module="extras[0].1"][data-training="true"]')),
        Step(("select", "device", ".to('meta')"), (  # what the module registered moves; the rest stays
            'div.module-inspector[data-devices="meta,cpu"]',
            'tr[data-name="encoder.weight"][data-kind="parameter"][data-device="meta"]',
            'tr[data-name="center"][data-kind="buffer"][data-device="meta"]',
            'tr[data-name="scale"][data-kind="unregistered"][data-device="cpu"]',
            'tr[data-name="extras[0].0.weight"][data-kind="unregistered"][data-device="cpu"]')),
        Step(("select", "device", ".to('cpu')"), (  # meta has no data to copy back: the inspector restores it
            'div.module-inspector[data-devices="cpu"]', 'tr[data-name="encoder.weight"][data-device="cpu"]',
            'p.module-inspector-action:has-text("to_empty")')),
    ), shows="div.module-inspector, p.module-inspector-action, li.module-node, tr[data-name]")],
    "lessons/07_checkpoints_lesson.ipynb": [Widget("checkpoint-inspector", "div.checkpoint-inspector", (
        Step(None, ('div.checkpoint-inspector[data-safe="false"][data-file="downloaded_model.pt"]',
                    'li.unsafe-global[data-global="utils.unsafe_pickle.raise_flag"]',
                    'tr[data-key="model.weight"][data-kind="tensor"][data-shape="2, 4"][data-dtype="torch.float32"]'
                    '[data-bytes="32"]')),
        Step(("select", "file", "resume.pt"), ('div.checkpoint-inspector[data-safe="true"][data-file="resume.pt"]'
                                               '[data-total-bytes="604"]:not(:has(li.unsafe-global))',
                                               'tr[data-key="optimizer.state.0.exp_avg"][data-kind="tensor"]'
                                               '[data-shape="8, 4"][data-bytes="128"]')),
        Step(("select", "file", "exec_payload.pt"), ('div.checkpoint-inspector[data-safe="false"]'
                                                     '[data-file="exec_payload.pt"]',
                                                     'li.unsafe-global[data-global="builtins.exec"]')),
        # my_checkpoint.pt is written after the inspector: only a rescan lists it
        Step(("click", 'button:text-is("rescan folder")', ""), ('option:text-is("my_checkpoint.pt")',)),
        Step(("select", "file", "my_checkpoint.pt"), ('div.checkpoint-inspector[data-safe="false"]'
                                                      '[data-file="my_checkpoint.pt"]',
                                                      'li.unsafe-global[data-global="datetime.date"]')),
    ), shows="div.checkpoint-inspector, li.unsafe-global")],
}


# ---- the course folder, the server and the browser ----

def assignment_paths() -> list[tuple[str, str]]:
    return [(nb.parent.name, nb.name) for nb in SOURCE_NOTEBOOKS]


# nbgrader's own release, for every assignment in one process (a CLI call each costs seconds).
RELEASE_ALL = """
import os
from nbgrader.apps import NbGrader, NbGraderAPI
app = NbGrader(); app.config_file_paths.append(os.getcwd()); app.load_config_file()
api = NbGraderAPI(config=app.config)
for assignment in sorted(os.listdir("release")):
    result = api.release_assignment(assignment)
    assert result["success"], result
"""


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory):
    """A folder the server serves: the lessons, each assignment solved and untouched, and the
    releases put in nbgrader's exchange (so the assignment list has something to list).
    The committed release/ is what students get (tests/test_release.py keeps it equal to a
    fresh generate), so it is used as is."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "nbgrader_config.py", root)  # Validate grades with the course's settings
    shutil.copytree(ROOT / "release", root / "release")
    # The lessons as a student's work/ holds them (autograder/student_folder.py): copies in lessons/.
    folder = importlib.util.spec_from_file_location("student_folder", ROOT / "autograder" / "student_folder.py")
    student_folder = importlib.util.module_from_spec(folder)
    folder.loader.exec_module(student_folder)
    student_folder.update_lessons(str(ROOT / "notebooks"), str(root))
    for assignment, name in assignment_paths():
        source = read_notebook(ROOT / "source" / assignment / name)
        release = read_notebook(root / "release" / assignment / name)
        write_notebook(build_submission(source, release, {}), root / "solved" / assignment / name)
        write_notebook(build_submission(source, release, None), root / "untouched" / assignment / name)
    # Run All gets a copy of its own: a notebook just closed still has its old session shutting down.
    shutil.copytree(root / "untouched" / HALF[0], root / "run-all" / HALF[0])
    write_notebook(build_submission(read_notebook(ROOT / "source" / HALF[0] / HALF[1]),
                                    read_notebook(root / "release" / HALF[0] / HALF[1]), half_done_answers()),
                   root / "half" / HALF[0] / HALF[1])
    done = subprocess.run([sys.executable, "-c", RELEASE_ALL], cwd=root, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"nbgrader's release failed:\n{done.stderr[-3000:]}"
    return root


@pytest.fixture(scope="module")
def lab(lab_root):
    """JupyterLab on loopback with a token, started the way ./course lab starts it, plus
    window.jupyterapp for the tests; its own settings and workspaces, so nothing of ~/.jupyter leaks in;
    its own /tmp folder, removed with it (the notebooks' scratch folders outlive kernels shut down
    from the page). A short path: the Validate worker's socket lies in it."""
    scratch = tempfile.mkdtemp(prefix="course-lab-tmp-")
    try:
        with running_lab(lab_root, "--expose-app-in-browser",
                         f"--LabApp.user_settings_dir={lab_root / '.lab-settings'}",
                         f"--LabApp.workspaces_dir={lab_root / '.lab-workspaces'}", env={"TMPDIR": scratch}) as base:
            yield base
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="module")
def page(lab):
    """One headless Chromium page with JupyterLab loaded; notebooks open and close in it in turn."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)  # shared with the hub's test: overwrite, never clear
    with sync_playwright() as pw:
        browser = launch(pw)
        tab = browser.new_page(viewport={"width": 1600, "height": 1000})
        tab.set_default_timeout(WIDGET_S * 1000)
        tab.goto(f"{lab}/lab?token={TOKEN}")
        tab.wait_for_function("window.jupyterapp !== undefined", timeout=KERNEL_S * 1000)
        # room for widgets
        tab.evaluate("window.jupyterapp.restored.then(() => window.jupyterapp.shell.collapseLeft())")
        tab.on("pageerror", lambda error: PAGE_ERRORS.append(str(error)))
        yield tab
        browser.close()


@pytest.fixture
def lab_page(page):
    """The page, left clean after each test: dialogs closed, notebooks closed, kernels shut down."""
    yield page
    page.keyboard.press("Escape")
    page.evaluate("""async () => {
        const app = window.jupyterapp;
        for (const w of Array.from(app.shell.widgets('main'))) {
            if (w.context) w.context.model.dirty = false;  // no "save changes?" dialog
            w.dispose();
        }
        app.serviceManager.sessions.shutdownAll();  // not awaited: a kernel takes seconds to exit
    }""")


# ---- driving a notebook ----

def open_notebook(page, path: str, kernel: bool = True):
    """Open `path`, wait until it is loaded (and, if `kernel`, its kernel idle); return the panel's locator."""
    # Only the open itself is awaited in the page (evaluate has no timeout); the rest is waited for below.
    panel_id = page.evaluate("path => window.jupyterapp.commands.execute('docmanager:open', {path}).then(w => w.id)",
                             path)
    try:
        page.wait_for_function("""([id, kernel]) => {
            const w = Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === id);
            const k = w.sessionContext.session?.kernel;
            return w.context.isReady && (!kernel || (k && k.status === 'idle')); }""",
                               arg=[panel_id, kernel], timeout=KERNEL_S * 1000)
    except PlaywrightTimeoutError:
        pytest.fail(f"{path}: not ready after {KERNEL_S} s; dialogs: {page.locator('.jp-Dialog').all_inner_texts()}")
    return page.locator(f'[id="{panel_id}"]')


def run_all(page) -> float:
    """Run every cell through JupyterLab's own command; return the seconds it took."""
    start = time.monotonic()
    page.evaluate("""() => { window.runAll = 'running';
        window.jupyterapp.commands.execute('notebook:run-all-cells')
            .then(ok => { window.runAll = ok ? 'done' : 'stopped'; }, e => { window.runAll = String(e); }); }""")
    page.wait_for_function("window.runAll !== 'running'", timeout=RUN_ALL_S * 1000)
    page.wait_for_function("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
                           timeout=RUN_ALL_S * 1000)
    return time.monotonic() - start


def run_problems(page) -> list[str]:
    """Every error output in the notebook's model, as "cell N: Name: message" (N counts from 1, as
    JupyterLab's status bar does), and every code cell run-all did not reach. stderr is not an error
    (JupyterLab draws both with the stderr mime type, so the model, not the DOM, tells them apart)."""
    return page.evaluate("""() => {
        const found = [];
        Array.from(window.jupyterapp.shell.currentWidget.content.model.cells).forEach((cell, i) => {
            if (cell.type !== 'code') return;
            for (const out of cell.outputs.toJSON())
                if (out.output_type === 'error') found.push(`cell ${i + 1}: ${out.ename}: ${out.evalue}`);
            // JupyterLab never sends an empty cell to the kernel, so only those may stay unnumbered.
            if (cell.executionCount === null && cell.sharedModel.getSource().trim())
                found.push(`cell ${i + 1}: not run`);
        });
        return found;
    }""")


def check_widgets_render(page, panel) -> int:
    """Every widget view in the notebook's outputs is drawn by its front end (not ipywidgets' error
    view, nor its "Error displaying widget" text); return how many there are."""
    wanted = page.evaluate("""() => Array.from(window.jupyterapp.shell.currentWidget.content.model.cells)
        .filter(cell => cell.type === 'code')
        .flatMap(cell => cell.outputs.toJSON())
        .filter(out => out.data && out.data['application/vnd.jupyter.widget-view+json']).length""")
    drawn = panel.locator(WIDGET_VIEW)
    try:
        expect(drawn).to_have_count(wanted, timeout=WIDGET_S * 1000)
    except AssertionError:
        broken = panel.locator(".jupyter-widgets-error-widget, "
                               ".jp-OutputArea-output:has-text('Error displaying widget')")
        raise AssertionError(f"{wanted} widget outputs, {drawn.count()} drawn; "
                             f"errors: {broken.all_inner_texts()}") from None
    return wanted


# What a failure quotes: each element as a selector of its data- attributes (the words of the
# expectations), with its text when it has none.
DESCRIBE = """elements => elements.slice(0, 40).map(e => e.tagName.toLowerCase()
    + Array.from(e.classList, c => '.' + c).join('')
    + (Array.from(e.attributes).filter(a => a.name.startsWith('data-')).map(a => `[${a.name}="${a.value}"]`).join('')
       || ` "${e.textContent.replace(/\\s+/g, ' ').trim().slice(0, 120)}"`))"""


def do_step(view, action: str, target: str, text: str) -> None:
    """One input, as a person gives it: type into, pick from, tick or untick the control with that label,
    or click what `target` selects (it must select one element)."""
    if action == "click":
        view.locator(target).click()
        return
    control = view.get_by_label(target, exact=True)
    if action == "fill":
        control.fill(text)
        control.press("Enter")  # FloatText syncs on Enter or blur, not on every key
    elif action == "select":
        control.select_option(label=text)
    elif action in ("check", "uncheck"):
        control.set_checked(action == "check")
    else:
        raise ValueError(f"unknown step action {action!r}")


def overflow(view) -> list[str]:
    """What in an output does not fit it: elements running past its right edge (beyond a widget's own
    few pixels of margin) where no part of the widget scrolls sideways to them, and table cells
    squeezed to about a word a line."""
    return view.evaluate("""out => { const edge = out.getBoundingClientRect().right + 8, found = [];
        const say = (e, why) => `${e.tagName.toLowerCase()} "${e.textContent.trim().slice(0, 50)}" ${why}`;
        const scrolls = e => { for (let a = e.parentElement; a && a !== out; a = a.parentElement)
            if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX) && a.getBoundingClientRect().right <= edge)
                return true;
            return false; };
        for (const e of out.querySelectorAll('table, p, td, th, svg, canvas, img')) {
            const right = e.getBoundingClientRect().right;
            if (right > edge && !scrolls(e))
                found.push(say(e, `ends at ${Math.round(right)} px, the output at ${Math.round(edge - 8)}`));
        }
        for (const e of out.querySelectorAll('td')) {
            const text = document.createRange();
            text.selectNodeContents(e);
            const lines = new Set(Array.from(text.getClientRects(), r => Math.round(r.top))).size;
            const words = e.textContent.trim().split(/\\s+/).length;
            if (lines >= 3 && lines >= 0.6 * words) found.push(say(e, `wraps to ${lines} lines for ${words} words`));
        }
        return found.slice(0, 5); }""")


def check_widget(page, panel, widget: Widget) -> None:
    """Walk a widget through its steps, in its pane of the lab's default split."""
    walk_widget(page, panel, widget)


def walk_widget(page, panel, widget: Widget) -> None:
    outputs = panel.locator(".jp-OutputArea-output")
    mine = outputs.filter(has=page.locator(f"{widget.hook}:is(.jupyter-widgets, .jupyter-widgets *)"))
    expect(mine, f"{widget.name} should render exactly once").to_have_count(1, timeout=WIDGET_S * 1000)
    # Held by position from here on: a step may change what the hook matched (an iteration count).
    view = outputs.nth(outputs.evaluate_all("(all, mine) => all.indexOf(mine)", mine.element_handle()))
    for step in widget.steps:
        if step.do:
            try:
                do_step(view, *step.do)
            except PlaywrightError as error:  # a control gone or renamed: one line, not Playwright's call log
                lines = [line.strip() for line in str(error).splitlines() if line.strip()]
                raise AssertionError(f"{widget.name}: could not {step.do}: {lines[0]} (last: {lines[-1]})") from None
        for selector in step.expect:
            try:
                expect(view.locator(selector).first).to_be_attached(timeout=WIDGET_S * 1000)
            except AssertionError:  # say what the widget shows instead of Playwright's page dump
                quoted = widget.shows or widget.hook
                shown = view.locator(quoted).evaluate_all(DESCRIBE) or [f"nothing that matches {quoted}"]
                raise AssertionError(f"{widget.name} after {step.do or 'run-all'}: nothing matches {selector}; "
                                     "the widget shows:\n  " + "\n  ".join(shown)) from None
        if widget.fits:
            past = overflow(view)
            assert not past, (f"{widget.name} after {step.do or 'run-all'}: wider than its pane (half a "
                              f"{FIT_WIDTH} px window): {past}")
    if widget.fits:
        view.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"{widget.name}-half-of-{FIT_WIDTH}px.png")


def run_and_check(page, path: str, shot_prefix: str, beside: str | None = None):
    """Open, run all, check outputs and widgets, screenshot; return the panel and a summary for the report.
    With `beside`: as the lab's start page lays them out, `path` on the left and `beside` on the right
    (without a kernel), in a FIT_WIDTH window."""
    panel = open_notebook(page, path)
    if beside:
        page.set_viewport_size({"width": FIT_WIDTH, "height": 900})
        page.evaluate("""([path, left]) => window.jupyterapp.commands.execute('docmanager:open',
                             {path, options: {mode: 'split-right', ref: left}})
                         .then(() => window.jupyterapp.shell.activateById(left))""",
                      [beside, panel.get_attribute("id")])
    try:
        return _run_and_check(page, panel, path, shot_prefix)
    finally:
        page.set_viewport_size({"width": 1600, "height": 1000})


def _run_and_check(page, panel, path: str, shot_prefix: str):
    PAGE_ERRORS.clear()
    seconds = run_all(page)
    errors = run_problems(page)
    # The notebook as it ended, for a person: the last cell in view.
    panel.locator(".jp-Cell").last.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"{shot_prefix}.png")
    assert not errors, f"{path} after run-all:\n" + "\n".join(errors)
    drawn = check_widgets_render(page, panel)
    widgets = WIDGETS.get(path, [])
    for widget in widgets:
        check_widget(page, panel, widget)
    for k in range(drawn):  # each widget as the steps above left it
        panel.locator(WIDGET_VIEW).nth(k).scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"{shot_prefix}-widget{k + 1}.png")
    assert not PAGE_ERRORS, f"{path}: uncaught errors in the page: {PAGE_ERRORS}"
    exercised = "".join(f"; {w.name} answers {len(w.steps) - 1} inputs" for w in widgets)
    return panel, f"ran all cells in {seconds:.1f} s, no error output; widgets drawn: {drawn}{exercised}"


def validate(page, panel, shot: str):
    """Press nbgrader's Validate button in the notebook toolbar; return the checklist in its dialog,
    having checked that the dialog shows nothing else (no stock heading, no cell source)."""
    panel.locator(".jp-Toolbar .validate-button").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible(timeout=VALIDATE_S * 1000)
    page.screenshot(path=SCREENSHOTS / shot)
    checklist = dialog.locator("#validation-message .course-checklist")
    expect(checklist).to_be_visible()
    expect(dialog.get_by_text("The following cell failed")).to_be_hidden()
    assert "Traceback" not in dialog.inner_text() and "from autograder import" not in dialog.inner_text()
    expect(checklist.locator(".course-cannot-see")).to_contain_text("Validate runs only the visible checks")
    return checklist


def statuses(checklist) -> list[str]:
    return checklist.locator("li").evaluate_all("items => items.map(li => li.dataset.status)")


# One assignment half done: a wrong answer, two left as stubs, the rest right.
HALF = ("01_tensors", "01_tensors.ipynb")
HALF_STATUSES = ["failed", "passed", "passed", "unanswered", "passed", "answered", "unanswered", "answered", "answered"]


def half_done_answers() -> dict[str, str]:
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    return {"q1_describe_answer": "def describe(t):\n    return {'shape': tuple(t.shape), 'dtype': t.dtype, "
                                  "'device': t.device, 'numel': len(t)}\n",
            "q4_tensor_bytes_answer": "def tensor_bytes(shape, dtype):\n    " + stub.replace("\n", "\n    "),
            "quiz_q2_answer": stub}


# ---- the tests ----

def test_every_widget_table_entry_names_a_lesson(covered):
    """A key that names no lesson (a renamed notebook) would leave its widgets silently unchecked."""
    stale = sorted(set(WIDGETS) - {f"lessons/{p.name}" for p in LESSONS})
    assert not stale, f"WIDGETS names notebooks that are not lessons: {stale}"
    covered(f"the widget table's {len(WIDGETS)} notebooks are all lessons")


@pytest.mark.parametrize("lesson", [p.name for p in LESSONS])
def test_lesson_runs_clean_and_its_widgets_work(lab_page, lesson, covered):
    _, summary = run_and_check(lab_page, f"lessons/{lesson}", f"lesson-{Path(lesson).stem}", beside=SPLIT_BESIDE)
    covered(summary)


@pytest.mark.parametrize(("assignment", "name"), assignment_paths())
def test_solved_assignment_runs_clean_and_validates(lab_page, assignment, name, covered):
    panel, summary = run_and_check(lab_page, f"solved/{assignment}/{name}", f"solved-{assignment}")
    checklist = validate(lab_page, panel, f"solved-{assignment}-validate.png")
    expect(checklist.locator(".course-summary")).to_contain_text("exercises pass their visible checks")
    assert set(statuses(checklist)) == {"passed", "answered"}, statuses(checklist)  # exercises, questions
    covered(f"{summary}; Validate's checklist: every exercise passed, every question answered")


@pytest.mark.parametrize(("assignment", "name"), assignment_paths())
def test_untouched_assignment_validates_as_not_answered(lab_page, assignment, name, covered):
    panel = open_notebook(lab_page, f"untouched/{assignment}/{name}", kernel=False)  # Validate uses its own
    checklist = validate(lab_page, panel, f"untouched-{assignment}-validate.png")
    assert set(statuses(checklist)) == {"unanswered"}, statuses(checklist)
    expect(checklist.locator("li").first).to_contain_text("not answered yet")
    covered(f"Validate on the untouched {assignment}: every exercise 'not answered yet'")


def test_half_done_assignment_validates_line_by_line(lab_page, covered):
    panel = open_notebook(lab_page, f"half/{HALF[0]}/{HALF[1]}", kernel=False)
    checklist = validate(lab_page, panel, f"half-{HALF[0]}-validate.png")
    assert statuses(checklist) == HALF_STATUSES
    expect(checklist.locator("li").first).to_contain_text(
        'Q1 · Describe a tensor: failed: describe(torch.zeros(2, 3))["numel"]: wrong value. Expected 6, got 2.')
    expect(checklist.locator("li[data-kind=question]").first).to_contain_text("answered, checked at grading")
    covered("Validate on a half-done 01_tensors: one failed with its check's reason, two not answered, "
            "three passed, three questions 'answered, checked at grading'")


def test_run_all_on_an_untouched_assignment_reaches_every_exercise(lab_page, covered):
    """Run All goes past each unanswered stub to the next exercise and still shows each error."""
    panel = open_notebook(lab_page, f"run-all/{HALF[0]}/{HALF[1]}")
    run_all(lab_page)  # its promise settles at the first error; the kernel runs on through the queue
    with contextlib.suppress(PlaywrightTimeoutError):  # the assertion below names the cells never run
        lab_page.wait_for_function("""() => Array.from(window.jupyterapp.shell.currentWidget.content.model.cells)
            .every(c => c.type !== 'code' || c.executionCount !== null || !c.sharedModel.getSource().trim())""",
                                   timeout=RUN_ALL_S * 1000)
    problems = run_problems(lab_page)
    panel.locator(".jp-Cell").last.scroll_into_view_if_needed()
    lab_page.screenshot(path=SCREENSHOTS / f"untouched-{HALF[0]}-run-all.png")
    assert not [p for p in problems if p.endswith("not run")], problems
    graded = lab_page.evaluate("""() => Array.from(window.jupyterapp.shell.currentWidget.content.model.cells)
        .filter(c => (c.getMetadata('nbgrader') || {}).grade)
        .map(c => c.outputs.toJSON().filter(o => o.output_type === 'error').map(o => o.ename).join())""")
    assert len(graded) == 9 and all(graded), graded
    covered(f"Run All on the untouched {HALF[0]}: every cell ran; all {len(graded)} test cells show their error")


def nbgrader_menu(page, shot: str) -> list[str]:
    """The Nbgrader menu's items (screenshot `shot` while it is open)."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    items = page.locator(".lm-Menu-content .lm-Menu-item:not(.lm-mod-hidden) .lm-Menu-itemLabel").all_inner_texts()
    page.screenshot(path=SCREENSHOTS / shot)
    page.keyboard.press("Escape")
    return items


def test_students_lab_opens_clean_with_no_instructor_panels(lab_page, lab_root, covered):
    page = lab_page
    assert page.locator(".jp-Notification-Toast-Container .Toastify__toast").count() == 0, "a toast (news?) shows"
    menu = nbgrader_menu(page, "lab-student.png")
    assert "Assignment List" in menu and "Formgrader" not in menu, menu
    assert page.locator("#nbgrader-create_assignemnt").count() == 0, "Create Assignment panel in a student's lab"
    open_notebook(page, f"solved/{HALF[0]}/{HALF[1]}")  # its kernel starts without asking
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").all_inner_texts()
    covered(f"a student's lab: no news toast, Nbgrader menu {menu}, no Create Assignment panel, a notebook's kernel "
            "starts without a dialog")


def test_nbgrader_menu_opens_the_assignment_list_and_fetch_goes_to_work(lab_page, lab_root, covered):
    page = lab_page
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    released = page.locator("#nbgrader-assignment-list #released_assignments_list")
    assignments = sorted({a for a, _ in assignment_paths()})
    for assignment in assignments:
        expect(released).to_contain_text(assignment, timeout=NBGRADER_S * 1000)
    page.screenshot(path=SCREENSHOTS / "assignment-list.png")
    fetched = lab_root / "work" / HALF[0] / HALF[1]
    assert not fetched.exists()
    released.locator(".list_item", has_text=HALF[0]).get_by_role("button", name="Fetch").click()
    expect(page.locator("#nbgrader-assignment-list #fetched_assignments_list")).to_contain_text(
        HALF[0], timeout=NBGRADER_S * 1000)
    assert fetched.exists(), f"the Assignment List fetched somewhere else than work/: {sorted(lab_root.iterdir())}"
    work = sorted(p.name for p in (lab_root / "work").iterdir())
    assert work == [HALF[0]], f"work/ holds more than the fetched assignment: {work}"
    page.screenshot(path=SCREENSHOTS / "assignment-list-fetched.png")
    covered(f"Nbgrader > Assignment List lists every released assignment ({', '.join(assignments)}); "
            f"Fetch puts {HALF[0]} in work/, where ./course lab and ./course fetch put it; work/ holds nothing else")


def test_instructors_lab_has_formgrader_and_create_assignment(page, tmp_path_factory, covered):
    root = tmp_path_factory.mktemp("instructor")
    shutil.copy(ROOT / "nbgrader_config.py", root)
    with running_lab(root, "--expose-app-in-browser", f"--LabApp.user_settings_dir={root / '.lab-settings'}",
                     f"--LabApp.workspaces_dir={root / '.lab-workspaces'}", role="instructor") as base:
        page = page.context.browser.new_page()  # a tab of its own, on the instructor's server
        page.set_viewport_size({"width": 1600, "height": 1000})
        page.goto(f"{base}/lab?token={TOKEN}")
        page.wait_for_function("window.jupyterapp !== undefined", timeout=KERNEL_S * 1000)
        page.evaluate("window.jupyterapp.restored")
        expect(page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")).to_be_visible(timeout=KERNEL_S * 1000)
        menu = nbgrader_menu(page, "lab-instructor.png")
        assert {"Assignment List", "Formgrader"} <= set(menu), menu
        expect(page.locator("#nbgrader-create_assignemnt")).to_be_attached()
        page.close()
    covered(f"an instructor's lab: Nbgrader menu {menu}, the Create Assignment panel")


@pytest.fixture(scope="module")
def feedback_html(tmp_path_factory) -> Path:
    """The feedback page a student gets for the half-done assignment: real autograde, real generate_feedback."""
    course = tmp_path_factory.mktemp("feedback")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "source" / HALF[0], course / "source" / HALF[0])
    nbgrader(course, "generate_assignment", HALF[0], "--force")
    write_notebook(build_submission(read_notebook(course / "source" / HALF[0] / HALF[1]),
                                    read_notebook(course / "release" / HALF[0] / HALF[1]), half_done_answers()),
                   course / "runtime" / "submitted" / "alice" / HALF[0] / HALF[1])
    nbgrader(course, "autograde", HALF[0])
    nbgrader(course, "generate_feedback", HALF[0])
    return course / "runtime" / "feedback" / "alice" / HALF[0] / HALF[1].replace(".ipynb", ".html")


def test_feedback_page_names_every_question(page, feedback_html, covered):
    page = page.context.browser.new_page()  # a tab of its own: the lab's stays as it is
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(feedback_html.as_uri())
    contents = page.locator("#toc li label.jump").all_inner_texts()
    page.screenshot(path=SCREENSHOTS / "feedback.png", full_page=False)
    assert contents[:3] == ["Q1 · Describe a tensor", "Q2 · Which property broke?", "Q3 · Fix a dtype bug"], contents
    assert "Test cell" not in contents and "Comment" not in contents
    expect(page.get_by_text("Not answered: the answer still raises NotImplementedError.").first).to_be_visible()
    expect(page.get_by_text("Comments: No response.")).to_have_count(0)
    heading = page.locator(".nbgrader_cell .panel-heading", has_text=f"Checks of {CONTENTS_ENTRY}")
    expect(heading).not_to_be_in_viewport()
    page.locator("#toc label.jump", has_text=CONTENTS_ENTRY).click()
    expect(heading).to_be_in_viewport()
    page.close()
    covered(f"the feedback page lists {len(contents)} named entries, says 'Not answered', no empty comments; "
            f"in a tab of its own, a contents entry scrolls to its question")


CONTENTS_ENTRY = "Q3 · Fix a dtype bug"  # far enough down the page to be out of sight at first


def test_feedback_contents_work_in_the_labs_html_viewer(lab_page, lab_root, feedback_html, covered):
    """A student opens their feedback from the file browser; the lab shows it in its HTML viewer (a
    sandboxed frame, no scripts, <base> at the file's /files/ URL). A contents entry scrolls to its
    question in place: the frame still holds the page it was given, not a navigation to /files/ (which
    a hub's frame-ancestors 'none' refuses, tests/hub/test_hub.py)."""
    page = lab_page
    folder = lab_root / "returned" / HALF[0] / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(feedback_html, folder)
    page.evaluate("path => window.jupyterapp.commands.execute('filebrowser:go-to-path', {path})",
                  f"returned/{HALF[0]}/feedback")
    page.locator(".jp-DirListing-item", has_text=feedback_html.name).dblclick()
    viewer = page.locator(".jp-HTMLViewer:visible iframe")
    expect(viewer).to_have_count(1)
    frame = page.frame_locator(".jp-HTMLViewer:visible iframe")
    heading = frame.locator(".nbgrader_cell .panel-heading", has_text=f"Checks of {CONTENTS_ENTRY}")
    expect(heading).not_to_be_in_viewport()
    frame.locator("#toc label.jump", has_text=CONTENTS_ENTRY).click()
    expect(heading).to_be_in_viewport()
    url = viewer.element_handle().content_frame().url
    page.screenshot(path=SCREENSHOTS / "feedback-contents-in-the-lab.png")
    assert url.startswith("blob:"), f"the contents entry navigated the viewer's frame to {url}"
    expect(frame.locator("#toc label.jump").first).to_be_visible()  # the page, not a blank pane
    covered(f"feedback opened from the file browser in the lab's HTML viewer: '{CONTENTS_ENTRY}' clicked in its "
            "contents scrolls its checks into view, the frame still shows the page (no navigation to /files/)")
