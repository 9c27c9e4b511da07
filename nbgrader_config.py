"""The course's nbgrader configuration: the one place for course id, paths, exchange,
timeouts and how output affects a score. nbgrader reads it from the folder it runs in
(the repository root, or a temporary course in the tests, which copy this file)."""
import os

here = os.path.dirname(os.path.abspath(__file__))
runtime = os.path.join(here, "runtime")  # git-ignored; nothing here is ever committed
os.makedirs(runtime, exist_ok=True)  # sqlite will not create the gradebook's folder

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.course_id = "pytorch-fundamentals"
c.CourseDirectory.root = here

# Authored and released notebooks are committed: source/ID/*.ipynb -> release/ID/*.ipynb.
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"

# nbgrader's working folders all live under runtime/, so none of them can be mistaken
# for the autograder/ package and one .gitignore line keeps them out of git.
c.CourseDirectory.submitted_directory = "runtime/submitted"
c.CourseDirectory.autograded_directory = "runtime/autograded"
c.CourseDirectory.feedback_directory = "runtime/feedback"
c.CourseDirectory.solution_directory = "runtime/solution"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(runtime, "gradebook.db")
c.Exchange.root = os.path.join(runtime, "exchange")  # nbgrader's default does not exist
os.makedirs(c.Exchange.root, exist_ok=True)  # else the Assignment List shows an exchange error
# A student's copies live in work/ID/, whichever way they came: ./course lab's copy, ./course
# fetch or the Assignment List's Fetch; fetching again adds missing files, never overwrites.
c.Exchange.assignment_dir = os.path.join(here, "work")
# The Assignment List changes into it and reads nbgrader's settings again there; work/ holds only
# the student's assignments, and the lab's own config folder brings these (lab/ROLE/nbgrader_config.py).
os.makedirs(c.Exchange.assignment_dir, exist_ok=True)
c.ExchangeFetchAssignment.replace_missing_files = True
c.CsvExportPlugin.to = os.path.join(runtime, "grades.csv")
# A never-submitted assignment exports an empty score, not 0.0 (classgrader/commands/export.py).
c.ExportApp.plugin_class = "classgrader.commands.export.CsvExport"
c.CsvExport.to = c.CsvExportPlugin.to

# A test cell that runs longer than this is stopped and scores zero. The one place this number is
# written: Validate (autograder/validate.py: cell_timeout) and each of the class grader's limits
# (classgrader/time_limits.py: a named multiple of it) follow it.
c.Execute.timeout = 120

# stderr never costs points: grading kernels (autograde and the Validate button alike)
# print stderr, PyTorch warnings included, on stdout. Only a raised exception fails a cell.
c.Execute.extra_arguments = ["--IPKernelApp.exec_lines=import autograder.grading_kernel"]

# Run All on a release goes past an unanswered exercise to the next (classgrader/commands/run_all.py).
c.GenerateAssignment.preprocessors.append("classgrader.commands.run_all.LetRunAllContinue")

# Feedback shows what failed and why, never the hidden tests' code.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "classgrader.commands.feedback.HideHiddenTests",
    "classgrader.commands.feedback.NameQuestions",
]
# ...and names each question in its contents and headings (classgrader/templates/course_feedback).
# Found without importing classgrader, which a student's bundle does not have.
import importlib.util  # noqa: E402

_grader = importlib.util.find_spec("classgrader")
if _grader is not None:
    import nbgrader
    c.HTMLExporter.template_name = "course_feedback"
    c.HTMLExporter.extra_template_basedirs = [
        os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates"),
        os.path.join(next(iter(_grader.submodule_search_locations)), "templates")]

# Autograding runs every notebook through the course's own execute step (warm, sandboxed,
# per-cell recovery, verdicts re-checked outside the kernel, see classgrader/judging/isolated_execute.py)
# and records flags for review. Everything else is nbgrader's own pipeline.
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "classgrader.class_run.flags.FindStructuralProblems",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "classgrader.judging.isolated_execute.IsolatedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "classgrader.class_run.outcomes.RecordOutcomes",  # what the class report reads, before SaveFlags takes the flags
    "classgrader.class_run.flags.SaveFlags",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.OverwriteCells.add_missing_cells = True  # a deleted test cell is put back and run (and flagged)
# Only on a machine that cannot sandbox, and knowingly: COURSE_SANDBOX=off ./course autograde ID
c.IsolatedExecute.use_sandbox = os.environ.get("COURSE_SANDBOX", "on") != "off"
# A class run (./course autograde) follows progress through these; elsewhere they do nothing.
c.Autograde.pre_convert_hook = "classgrader.class_run.progress.before"
c.Autograde.post_convert_hook = "classgrader.class_run.progress.after"
