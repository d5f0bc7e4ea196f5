# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine:
# they create .venv and install harmonium into it first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-slow lint docs bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

## The main job: LDA by collapsed Gibbs sampling on the bundled Debian corpus,
## top words per topic and held-out perplexity on 10% of the documents.
demo: $(STAMP)
	@mkdir -p demo-out
	$(VENV)/bin/harmonium fit debian --n-topics 20 --n-iter 150 --test-size 0.1 --seed 0 \
		--output demo-out/lda-debian.hmn
	$(VENV)/bin/harmonium topics demo-out/lda-debian.hmn --n-words 8

## Unit, kernel, statistical and integration tests (slow tier excluded), then the
## kernel tests again with numba's JIT disabled (the plain-Python path). One worker a core
## (pytest-xdist), each test file on one worker, so a file's module fixtures are built once.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests/kernels

## The documentation site (Sphinx; API reference from the numpydoc docstrings) in docs/_build/html.
## Warnings and broken cross-references are errors (-W -n), as in tests/integration/test_docs_build.py.
docs: $(STAMP)
	$(PY) -m sphinx -b html -W -n --keep-going docs docs/_build/html

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

lint: $(STAMP)
	$(VENV)/bin/ruff check harmonium tests benchmarks

clean:
	rm -rf $(VENV) demo-out build *.egg-info docs/_build docs/generated
