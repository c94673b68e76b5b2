"""nbgrader settings: this checkout is an nbgrader course directory as it stands.

The instructors' edition, ``instructors/notebooks/``, is the source of one assignment,
named ``notebooks``, so from the repository's root

    nbgrader generate_assignment notebooks   # the student edition, in student/notebooks/

works without moving a file. ``make student`` runs it on ``.student-source/``, the
instructors' edition without its instructors-only cells (the asserts of the predict-first
answers), which a student edition must not hold. Grade in a course directory of its
own, outside this checkout (``make course-dir``, ``make autograde``: instructors/README.md),
not with ``nbgrader autograde`` here, which runs each submission with this checkout, its
answer key and its gradebook in reach. Each exercise is an
autograded answer cell (its solution between ``### BEGIN SOLUTION`` and
``### END SOLUTION``) followed by a locked test cell worth its points, which raises
when the answer is wrong or missing.
"""

c = get_config()  # noqa: F821 -- nbgrader's config loader provides get_config

# source/<assignment> would be nbgrader's default; here the assignment's source is the
# instructors' edition, instructors/notebooks/. Its release, student/notebooks/, holds the
# same notebooks as the learner's edition in notebooks/ (instructors/editions.py).
c.CourseDirectory.source_directory = "instructors"
c.CourseDirectory.release_directory = "student"

# Only the notebooks go to students: the nbval settings in instructors/notebooks/ are for
# the course's own CI.
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
