"""nbgrader configuration of the minikafka course (this directory is the course root).

nbgrader reads this file when it runs here (`cd grading && nbgrader ...`, or JupyterLab started
here for the formgrader) and `python -m grading` loads it for every command. Paths default to
this directory; the environment variables below move them without editing the file.

    GRADING_DB_URL        the gradebook (default: sqlite file gradebook.db here)
    GRADING_EXCHANGE      the exchange directory for release/fetch/submit/collect
                          (default: exchange/ here; a shared course uses a directory all
                          students can write, e.g. /srv/nbgrader/exchange)
    GRADING_CELL_TIMEOUT  seconds a cell may run before it is interrupted (default 30)
"""

import os

c = get_config()  # noqa: F821  (injected by traitlets when it loads this file)

ROOT = os.path.dirname(os.path.abspath(__file__))
CELL_TIMEOUT = int(os.environ.get("GRADING_CELL_TIMEOUT", "30"))
MAX_CELL_TIMEOUT = 600

c.CourseDirectory.course_id = "minikafka-course"
c.CourseDirectory.root = ROOT
c.CourseDirectory.db_url = os.environ.get(
    "GRADING_DB_URL", "sqlite:///" + os.path.join(ROOT, "gradebook.db"))
c.Exchange.root = os.environ.get("GRADING_EXCHANGE", os.path.join(ROOT, "exchange"))
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "spark-warehouse", "metastore_db",
]


def cell_timeout(cell) -> int:
    """Seconds a cell may run in the unsandboxed path (--unsandboxed). A runaway loop is
    interrupted after this and fails its own cell; grading goes on with the next cell. Cells
    that start Spark ask for more through their metadata ("minikafka": {"timeout": N}),
    capped so no cell can hang grading; a value that is not a positive number is ignored.
    (The sandboxed path reads every limit from the instructor's source notebook instead.)"""
    metadata = cell.get("metadata", {})
    asked = metadata.get("minikafka", {}).get("timeout") if isinstance(metadata, dict) else None
    if isinstance(asked, (int, float)) and not isinstance(asked, bool) and asked > 0:
        return min(int(asked), MAX_CELL_TIMEOUT)
    return CELL_TIMEOUT


c.Execute.timeout = CELL_TIMEOUT
c.Execute.timeout_func = cell_timeout
c.Execute.interrupt_on_timeout = True
# In-memory history as nbgrader's default, and no kernel log chatter on the grader's terminal.
c.Execute.extra_arguments = ["--HistoryManager.hist_file=:memory:", "--log-level=ERROR"]

# Feedback shows the visible tests only: hidden-test regions are cut from the graded copy.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades", "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor"]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
