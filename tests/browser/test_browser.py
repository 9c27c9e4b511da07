"""The course as a student sees it: a real JupyterLab driven by headless Chromium (Debian's, through
Playwright). Every lesson and every solved assignment runs top to bottom without an error output,
every widget renders with its data and answers to input, and nbgrader's Validate button and
assignment list work. Screenshots land in artifacts/screenshots/ for a person to look at.

One server, one browser, one notebook at a time: the whole module takes about 2.5 minutes on 2 cores."""
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import (Error as PlaywrightError, TimeoutError as PlaywrightTimeoutError, expect,
                                 sync_playwright)

from coursekit import (LAB_TOKEN as TOKEN, LESSONS, ROOT, SOURCE_NOTEBOOKS, build_submission, read_notebook,
                       running_lab, write_notebook)

CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get update && apt-get install -y --no-install-recommends chromium"
# From the engineering notes: without the networking flags Chromium stalls on the refused
# connections of a machine with no network.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
WIDGET_VIEW = ".jp-OutputArea-output > .jupyter-widgets:not(.jupyter-widgets-error-widget)"  # a drawn widget
PAGE_ERRORS: list[str] = []  # uncaught exceptions in the page: a widget's front end that broke
KERNEL_S, RUN_ALL_S, WIDGET_S, VALIDATE_S = 60, 180, 30, 180  # lessons run in 5-10 s; CI is slower

NO_BROWSER = f"browser tests need Debian's Chromium at {CHROMIUM}: {INSTALL}"
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")
# A machine without the browser skips these tests, but CI must not pass by testing nothing.
pytestmark = pytest.mark.skipif(not CHROMIUM.exists() and not IN_CI, reason=NO_BROWSER)


@pytest.fixture(scope="module", autouse=True)
def chromium_in_ci():
    if not CHROMIUM.exists():  # only reached in CI (skipped otherwise): fail before starting a server
        pytest.fail(NO_BROWSER, pytrace=False)


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


WIDGETS: dict[str, list[Widget]] = {  # lab path -> its widgets; notebooks not here get the no-error check
    "notebooks/01_tensors.ipynb": [Widget("dtype-explorer", "table.dtype-explorer", (
        Step(None, ('table[data-value="2049.0"][data-dtype="float16"][data-count="1000"]',
                    'tr[data-dtype="float16"][data-stored="2048.0"][data-selected="true"]')),
        Step(("fill", "value", "0.1"), ('table[data-value="0.1"]',
                                        'tr[data-dtype="float16"][data-stored="0.0999755859375"]')),
        Step(("select", "dtype", "int8"), ('table[data-dtype="int8"]',
                                           'tr[data-dtype="int8"][data-selected="true"][data-stored="0"]')),
        Step(("fill", "elements", "10"), ('table[data-count="10"]', 'tr[data-dtype="int8"][data-total-bytes="10"]')),
    ))],
    "notebooks/03_broadcasting_views.ipynb": [
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
    "notebooks/04_autograd.ipynb": [
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
    "notebooks/05_no_grad.ipynb": [
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
    "notebooks/06_modules.ipynb": [Widget("module-inspector", 'div.module-inspector[data-class="Zoo"]', (
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
    "notebooks/07_checkpoints.ipynb": [Widget("checkpoint-inspector", "div.checkpoint-inspector", (
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
    (root / "notebooks").mkdir()
    for lesson in LESSONS:
        shutil.copy(lesson, root / "notebooks")
    for assignment, name in assignment_paths():
        source = read_notebook(ROOT / "source" / assignment / name)
        release = read_notebook(root / "release" / assignment / name)
        write_notebook(build_submission(source, release, {}), root / "solved" / assignment / name)
        write_notebook(build_submission(source, release, None), root / "untouched" / assignment / name)
    done = subprocess.run([sys.executable, "-c", RELEASE_ALL], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"nbgrader's release failed:\n{done.stderr[-3000:]}"
    # No news or update checks: their toast would cover the notebook in the screenshots.
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    return root


@pytest.fixture(scope="module")
def lab(lab_root):
    """JupyterLab on loopback with a token, started the way ./course lab starts it, plus
    window.jupyterapp for the tests; its own settings and workspaces, so nothing of ~/.jupyter leaks in."""
    with running_lab(lab_root, "--expose-app-in-browser", f"--LabApp.user_settings_dir={lab_root / '.lab-settings'}",
                     f"--LabApp.workspaces_dir={lab_root / '.lab-workspaces'}") as base:
        yield base


@pytest.fixture(scope="module")
def page(lab):
    """One headless Chromium page with JupyterLab loaded; notebooks open and close in it in turn."""
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)  # only this run's pictures
    SCREENSHOTS.mkdir(parents=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        tab = browser.new_page(viewport={"width": 1600, "height": 1000})
        tab.set_default_timeout(WIDGET_S * 1000)
        tab.goto(f"{lab}/lab?token={TOKEN}")
        tab.wait_for_function("window.jupyterapp !== undefined", timeout=KERNEL_S * 1000)
        tab.evaluate("window.jupyterapp.restored.then(() => window.jupyterapp.shell.collapseLeft())")  # room for widgets
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
        broken = panel.locator(".jupyter-widgets-error-widget, .jp-OutputArea-output:has-text('Error displaying widget')")
        raise AssertionError(f"{wanted} widget outputs, {drawn.count()} drawn; errors: {broken.all_inner_texts()}") from None
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


def check_widget(page, panel, widget: Widget) -> None:
    """Walk a widget through its steps."""
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


def run_and_check(page, path: str, shot_prefix: str):
    """Open, run all, check outputs and widgets, screenshot; return the panel and a summary for the report."""
    panel = open_notebook(page, path)
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
    """Press nbgrader's Validate button in the notebook toolbar; return the result dialog."""
    panel.locator(".jp-Toolbar .validate-button").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible(timeout=VALIDATE_S * 1000)
    page.screenshot(path=SCREENSHOTS / shot)
    return dialog


# ---- the tests ----

@pytest.mark.parametrize("lesson", [p.name for p in LESSONS])
def test_lesson_runs_clean_and_its_widgets_work(lab_page, lesson, covered):
    _, summary = run_and_check(lab_page, f"notebooks/{lesson}", f"lesson-{Path(lesson).stem}")
    covered(summary)


@pytest.mark.parametrize("assignment,name", assignment_paths())
def test_solved_assignment_runs_clean_and_validates(lab_page, assignment, name, covered):
    panel, summary = run_and_check(lab_page, f"solved/{assignment}/{name}", f"solved-{assignment}")
    dialog = validate(lab_page, panel, f"solved-{assignment}-validate.png")
    expect(dialog.locator("#validation-message.validation-success")).to_contain_text("Success!")
    expect(dialog).to_have_class(re.compile("nbgrader-SuccessDialog"))
    covered(f"{summary}; Validate in the toolbar says: Success")


@pytest.mark.parametrize("assignment,name", assignment_paths())
def test_untouched_assignment_fails_validate(lab_page, assignment, name, covered):
    panel = open_notebook(lab_page, f"untouched/{assignment}/{name}", kernel=False)  # Validate uses its own
    dialog = validate(lab_page, panel, f"untouched-{assignment}-validate.png")
    message = dialog.locator("#validation-message.validation-failed")
    expect(message).to_contain_text("The following cell failed")
    expect(message).to_contain_text("NotImplementedError")  # the stubs' own error, not a broken kernel
    covered(f"Validate on the untouched {assignment} reports its failing test cells")


def test_nbgrader_menu_opens_the_assignment_list(lab_page, covered):
    page = lab_page
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    released = page.locator("#nbgrader-assignment-list #released_assignments_list")
    assignments = sorted({a for a, _ in assignment_paths()})
    for assignment in assignments:
        expect(released).to_contain_text(assignment, timeout=WIDGET_S * 1000)
    page.screenshot(path=SCREENSHOTS / "assignment-list.png")
    covered(f"Nbgrader > Assignment List lists every released assignment ({', '.join(assignments)})")
