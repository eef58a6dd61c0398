# The two commands: `make run` and `make test`. Both install what is missing first (scripts/bootstrap).
SHELL := /bin/bash
BUILD ?= build
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 60
SOAK_SECONDS ?= 600

.PHONY: run test build bootstrap fuzz bench soak docs install deb format format-check clean

bootstrap:
	@scripts/bootstrap

build: bootstrap
	@scripts/build normal

run: build
	@$(BUILD)/normal/apps/duet/duet serve

test: bootstrap
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/run-tests

# Every fuzz target (one per directory of tests/fuzz/corpus/) in turn, FUZZ_SECONDS in total split evenly
# between them (at least 3 s each), as `make test` does. New inputs that reach new code go to
# tests/fuzz/corpus/<target>/, an input that fails to tests/fuzz/finds/<target>/: both where `git status`
# shows them, to be committed (a find moves to the corpus once its bug is fixed).
fuzz: bootstrap
	@scripts/build fuzz || exit 1; targets=(tests/fuzz/corpus/*/); \
	    each=$$(( $(FUZZ_SECONDS) / $${#targets[@]} )); [ $$each -ge 3 ] || each=3; \
	    status=0; for dir in "$${targets[@]}"; do target=$$(basename "$$dir"); \
	        mkdir -p tests/fuzz/finds/$$target; echo "fuzz: $$target for $${each}s"; \
	        $(BUILD)/fuzz/tests/fuzz/$${target}_fuzz -max_total_time=$$each \
	            -artifact_prefix=tests/fuzz/finds/$$target/ tests/fuzz/corpus/$$target || status=1; \
	        rmdir tests/fuzz/finds/$$target 2>/dev/null; done; \
	    rmdir tests/fuzz/finds 2>/dev/null; exit $$status

# Not part of `make test`: timed figures belong in bench/RESULTS.md, never in a test's verdict.
bench: bootstrap
	@scripts/build release && node bench/run.mjs

# Not part of `make test` either: SOAK_SECONDS of mixed traffic against `duet serve` and `duet gateway`, failing
# when memory grows past its bound after warm-up or descriptors and children do not come back (bench/soak.mjs).
soak: bootstrap
	@scripts/build release && SOAK_SECONDS=$(SOAK_SECONDS) node bench/soak.mjs

# The optimized build installed under PREFIX: headers, libraries, the programs, the CMake package
# (find_package(duet)) and duet.pc (cmake/duet_install.cmake). `make install PREFIX=~/.local`.
install: bootstrap
	@scripts/build release && cmake --install $(BUILD)/release --prefix $(PREFIX)

# The Debian packages duet and libduet-dev from the optimized build (cmake/duet_package.cmake).
deb: bootstrap
	@scripts/build release && (cd $(BUILD)/release && rm -f packages/*.deb && cpack >/dev/null) && \
	    ls $(BUILD)/release/packages/*.deb

# The API reference: doxygen over the public headers (docs/Doxyfile), the version from include/duet/version.hpp,
# into $(BUILD)/docs/html. Any warning fails it, as the "docs (doxygen)" stage of `make test` does.
docs: bootstrap
	@version=$$(sed -n 's/^#define DUET_VERSION "\(.*\)"$$/\1/p' include/duet/version.hpp); \
	    rm -rf $(BUILD)/docs/html && mkdir -p $(BUILD)/docs && \
	    ( cat docs/Doxyfile; echo "PROJECT_NUMBER = $$version"; echo "OUTPUT_DIRECTORY = $(BUILD)/docs" ) | \
	        doxygen - || { echo "docs: doxygen warned (above); the reference must build without warnings" >&2; \
	        exit 1; }; \
	    echo "docs: $(BUILD)/docs/html/index.html"

format:
	@scripts/cxx-files | xargs clang-format -i

format-check:
	@scripts/cxx-files | xargs clang-format --dry-run -Werror

clean:
	rm -rf $(BUILD)
