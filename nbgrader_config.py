"""nbgrader settings: this checkout is an nbgrader course directory as it stands.

The course's ``notebooks/`` folder is the source of one assignment, named
``notebooks``, so from the repository's root

    nbgrader generate_assignment notebooks   # the student edition, in student/notebooks/
    nbgrader autograde notebooks             # grades submitted/<student>/notebooks/

work without moving a file (``make student`` runs the first). Each exercise is an
autograded answer cell (its solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION``) followed by a locked test cell worth its points, which raises
when the answer is wrong or missing.
"""

from nbgrader.converters import Autograde
from nbgrader.preprocessors import Execute


class ExecuteWithoutOutputWidgets(Execute):
    """nbgrader's Execute without nbclient's stand-in for the browser's Output widget.

    Every ``interact`` slider has an Output widget. nbclient plays the browser's part for it
    by sending the widget's state to the kernel on the shell socket, from one task, while
    another task waits on that socket for the cell's reply; now and then the reply then
    goes unseen until the cell's timeout (jupyter/nbclient#312), minutes lost per slider
    cell. Grading needs no widget state: a slider's first plot stays a plain cell output.
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.widget_registry = {}


c = get_config()  # noqa: F821 -- nbgrader's config loader provides get_config

# source/<assignment> would be nbgrader's default; here the assignment folder is
# notebooks/ itself, at the root of the course directory.
c.CourseDirectory.source_directory = "."
c.CourseDirectory.release_directory = "student"

# Only the notebooks go to students: the instructors' guide and the nbval settings
# in notebooks/ are for the course's own CI.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    "README.md",
    "conftest.py",
    "nbval_sanitize.cfg",
]

# The stub a learner sees in place of each solution; the check cell then reports
# "not done yet" together with the task from the function's docstring.
c.ClearSolutions.code_stub = {
    "python": "# Your code here: replace the line below.\nraise NotImplementedError()"
}

# nbgrader's default is 30 s a cell; notebooks 09 and 10 train a model in one cell.
c.Execute.timeout = 300
c.Autograde.autograde_preprocessors = [
    ExecuteWithoutOutputWidgets if step is Execute else step
    for step in Autograde.class_traits()["autograde_preprocessors"].default()
]
