# The two commands: `make run` and `make test`. Both install what is missing first (scripts/bootstrap).
SHELL := /bin/bash
BUILD ?= build
FUZZ_SECONDS ?= 60

.PHONY: run test build bootstrap fuzz bench format format-check clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	@scripts/build normal

run: build
	@$(BUILD)/normal/apps/duet/duet serve

test: bootstrap
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-tests

# New inputs that reach new code go to tests/fuzz/corpus/, an input that fails to tests/fuzz/finds/: both where
# `git status` shows them, to be committed (a find moves to the corpus once its bug is fixed).
fuzz: bootstrap
	@mkdir -p tests/fuzz/finds && scripts/build fuzz && \
	    $(BUILD)/fuzz/tests/fuzz/core_fuzz -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=tests/fuzz/finds/ tests/fuzz/corpus

# Not part of `make test`: timed figures belong in bench/RESULTS.md, never in a test's verdict.
bench: bootstrap
	@scripts/build release && node bench/run.mjs

format:
	@scripts/cxx-files | xargs clang-format -i

format-check:
	@scripts/cxx-files | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD)
