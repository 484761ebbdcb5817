# mathlens: two commands for a fresh machine.
#   make demo   set everything up, run a calculus exam on the embedded model, analyse it
#   make test   set everything up, run the whole test suite
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_EXAM ?= calc3-exam1 calc1-exam1
DEMO_DIR ?= runs/demo

.PHONY: setup demo test lint bench clean-demo

setup:
	bash scripts/setup.sh

demo: setup
	bash scripts/demo.sh "$(DEMO_EXAM)" "$(DEMO_DIR)"

test:
	bash scripts/setup.sh --browser
	bash scripts/test.sh

lint:
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

bench:
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean-demo:
	rm -rf "$(DEMO_DIR)"
