# pm-bot build. `make` builds build/pm-bot and build/libpmbot.a with the
# hardening flags distributions ship with; `make check` runs every test in
# that build and in an ASan+UBSan build.
#
# DEVELOPER=1 turns warnings into errors. `make check` and CI set it; a
# user's plain `make` does not, so a newer compiler's new warning never
# stops a build (git's DEVELOPER=1, libgit2's ENABLE_WERROR).
# HARDEN=0 leaves the hardening flags out.

CC       ?= cc
PKG_CONFIG ?= pkg-config
PKGS     := libgit2 libcurl jansson yaml-0.1 libcmark-gfm libcrypto
# The VERSION file of a release tarball, else `git describe`, else this base (scripts/version.sh).
VERSION  := $(shell sh scripts/version.sh 0.1.0)

BUILD    ?= build
SANITIZE ?= 0

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libcurl's, libgit2's and libcrypto's headers only: src/net/net.c opens
# libcurl when HTTP is first spoken, src/repo/git.c libgit2 when a
# repository is first opened and src/util/hash.c libcrypto on the first hash
# (pmbot/dl.h), so the commands that never need them do not load them.
# dlopen is in libc from glibc 2.34 (Debian 12, Ubuntu 22.04); older ones
# need LIBDL=-ldl.
LIBDL    ?=
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(filter-out libcurl libgit2 libcrypto,$(PKGS)) 2>/dev/null) \
        -lcmark-gfm-extensions $(LIBDL)
# The tests make their repositories with libgit2, check hashes with
# libcrypto and whole numbers with libm's floor() themselves.
TEST_LIBS  := $(shell $(PKG_CONFIG) --libs cmocka libgit2 libcrypto 2>/dev/null) -lm

DEVELOPER ?= 0
HARDEN   ?= 1

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wmissing-format-attribute -Wvla -Wpointer-arith -Wundef -Wno-unused-parameter
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif
# banned.h is included by every source file after its system headers (as
# git does): forced in first, its macros would break glibc's fortified
# inline wrappers.
BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g \
        -Iinclude -DPMBOT_VERSION='"$(VERSION)"' $(WARN) $(PKG_CFLAGS)

# A flag the compiler accepts, or nothing: -fcf-protection exists on x86
# only, and older compilers lack some of these.
cc-option = $(shell $(CC) -Werror $(1) -x c -c /dev/null -o /dev/null 2>/dev/null && echo "$(1)")

# What Debian's and Ubuntu's packages are built with (dpkg-buildflags with
# hardening=+all) and what Ubuntu's gcc turns on by itself.
HARDEN_CFLAGS := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 \
        $(call cc-option,-fstack-protector-strong) \
        $(call cc-option,-fstack-clash-protection) \
        $(call cc-option,-fcf-protection)
HARDEN_LDFLAGS := -Wl,-z,relro,-z,now

ifeq ($(SANITIZE),1)
# The sanitizers check more than _FORTIFY_SOURCE and intercept the same
# functions, so this build goes without the hardening flags.
OPT_CFLAGS := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
OPT_LDFLAGS := -fsanitize=address,undefined
else ifeq ($(HARDEN),1)
OPT_CFLAGS := -O2 $(HARDEN_CFLAGS)
OPT_LDFLAGS := $(HARDEN_LDFLAGS)
else
OPT_CFLAGS := -O2
OPT_LDFLAGS :=
endif

ALL_CFLAGS := $(BASE_CFLAGS) $(OPT_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(OPT_LDFLAGS) $(LDFLAGS)

SRC      := $(sort $(shell find src -name '*.c'))
GQL      := $(sort $(wildcard src/github/graphql/*.graphql))
GEN_SRC  := $(BUILD)/gen/graphql_docs.c
LLM_FILES := $(sort $(wildcard src/llm/prompts/*.md)) $(sort $(wildcard docs/schemas/llm/*.schema.json))
LLM_GEN  := $(BUILD)/gen/llm_files.c
OBJ      := $(SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/graphql_docs.o $(BUILD)/obj/gen/llm_files.o
LIB      := $(BUILD)/libpmbot.a
CMD_SRC  := $(sort $(wildcard cmd/pm-bot/*.c))
CMD_OBJ  := $(CMD_SRC:%.c=$(BUILD)/obj/%.o)
BIN      := $(BUILD)/pm-bot

TEST_SRC   := $(sort $(wildcard tests/unit/test_*.c))
TEST_BINS  := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_HELP  := $(sort $(wildcard tests/unit/helpers/*.c))
TEST_HOBJ  := $(TEST_HELP:%.c=$(BUILD)/obj/%.o)

SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all deps test test-unit test-e2e check check-source check-normal check-asan demo clean fuzz bench bench-apply bench-goals bench-github valgrind valgrind-run e2e emu-deps test-emu docs check-layers module-graph

all: $(BIN) $(LIB)

# Keep the test objects: as intermediates make would delete them after each
# run and compile them all again the next time.
.SECONDARY:

deps:
	@scripts/install-deps.sh

Q := $(if $(V),,@)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(GEN_SRC): $(GQL) scripts/embed-graphql.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/embed-graphql.sh $@ $(GQL)

$(BUILD)/obj/gen/graphql_docs.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The LLM prompt templates and output schemas, compiled in (include/pmbot/llm.h, part 3).
$(LLM_GEN): $(LLM_FILES) scripts/embed-files.sh Makefile
	@mkdir -p $(dir $@)
	$(Q)scripts/embed-files.sh $@ pmbot/llm.h pmbot_embedded_file pmbot_llm_files $(LLM_FILES)

$(BUILD)/obj/gen/llm_files.o: $(LLM_GEN)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(CMD_OBJ) $(LIB)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CMD_OBJ) $(LIB) $(PKG_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TEST_HOBJ) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_HOBJ) $(LIB) $(PKG_LIBS) $(TEST_LIBS)

# Runs every unit test binary and every end-to-end script; fails on the first
# failing program but lets each program report all of its own failures.
RUN_UNIT = set -e; for t in $(TEST_BINS); do echo "== $$t"; $(SAN_ENV) $$t; done
RUN_E2E  = set -e; for t in $(sort $(wildcard tests/e2e/test_*.sh)); do \
		echo "== $$t"; $(SAN_ENV) PMBOT=$(abspath $(BIN)) bash $$t; done

test: $(BIN) $(TEST_BINS)
	@scripts/check-layers.sh $(BUILD)/obj
	@$(RUN_UNIT)
	@$(RUN_E2E)

test-unit: $(BIN) $(TEST_BINS)
	@$(RUN_UNIT)

test-e2e: $(BIN)
	@$(RUN_E2E)

check-normal: deps
	$(MAKE) BUILD=build SANITIZE=0 DEVELOPER=1 test

check-asan: deps
	$(MAKE) BUILD=build/asan SANITIZE=1 DEVELOPER=1 test

# The loopback GitHub emulator (Node 20): its npm packages come from the
# committed lockfile; its own tests prove it rejects what GitHub rejects.
EMU_DIR   := tests/github-emu
EMU_STAMP := $(EMU_DIR)/node_modules/.package-lock.json

$(EMU_STAMP): $(EMU_DIR)/package.json $(EMU_DIR)/package-lock.json
	cd $(EMU_DIR) && npm ci --no-audit --no-fund
	@touch $@

emu-deps: deps $(EMU_STAMP)

test-emu: emu-deps
	node --test $(EMU_DIR)/test/*.test.js

check-normal check-asan: emu-deps

# Source rules a compiler cannot check: banned.h after the system headers.
check-source:
	@scripts/check-includes.sh

# Modules depend one way (scripts/check-layers.sh; `make test` runs it too).
check-layers: $(LIB)
	@scripts/check-layers.sh $(BUILD)/obj

module-graph: $(LIB)
	@scripts/check-layers.sh --graph $(BUILD)/obj

check: check-source check-normal check-asan test-emu
	@echo "make check: all tests passed in the normal and the ASan+UBSan builds, and the emulator's own tests"

# Without the hardening flags: valgrind checks memory itself, and it takes
# glibc's __memmove_chk for __memcpy_chk, so a legitimate overlapping
# memmove of the fortified build would be reported as an error.
valgrind:
	@$(MAKE) --no-print-directory BUILD=build/valgrind SANITIZE=0 HARDEN=0 valgrind-run

valgrind-run: $(BIN) $(TEST_BINS)
	@set -e; for t in $(TEST_BINS); do \
		echo "== valgrind $$t"; \
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect $$t; \
	done

# docs/commands.md is made from `pm-bot help`; test_cli.sh fails when it is stale.
docs: $(BIN)
	@scripts/gen-commands.sh $(BIN) > docs/commands.md.tmp && mv docs/commands.md.tmp docs/commands.md

demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	@scripts/demo.sh $(BIN)

# FUZZ_SECONDS per target; FUZZ_TARGETS picks some of fuzz/fuzz_*.c (default: all).
FUZZ_BUILD := build/fuzz
fuzz:
	@scripts/fuzz.sh $(FUZZ_BUILD) $(or $(FUZZ_SECONDS),60) $(FUZZ_TARGETS)

# What every bench runs a command under for its CPU time and peak (bench/rusage.c).
RUSAGE := $(BUILD)/bench/rusage

bench: $(BIN) $(RUSAGE)
	@bench/run.sh $(BIN)

# Issue 17's figures in one run; PMBOT_PY_REF adds the Python pm-bot's (bench/goals.sh).
# validate_call and plan_call time validate and plan in-process, as the
# Python figures are taken.
VALIDATE_CALL := $(BUILD)/bench/validate_call
PLAN_CALL := $(BUILD)/bench/plan_call

bench-goals: $(BIN) $(VALIDATE_CALL) $(PLAN_CALL) $(RUSAGE)
	@bench/goals.sh $(BIN)

# `pm-bot apply` of a 10,000-item plan with the file backend (BENCH_N items); figures only.
bench-apply: $(BIN) $(RUSAGE)
	@bench/apply_bench.sh $(BIN)

clean:
	rm -rf build

ALIAS_BENCH := $(BUILD)/bench/gql_alias_bench

$(VALIDATE_CALL): $(BUILD)/obj/bench/validate_call.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

$(PLAN_CALL): $(BUILD)/obj/bench/plan_call.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

$(RUSAGE): $(BUILD)/obj/bench/rusage.o
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $<

$(ALIAS_BENCH): $(BUILD)/obj/bench/gql_alias_bench.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(PKG_LIBS)

# The bench programs are built by the tests too, so that every compiler and
# distribution CI builds with keeps them building, and tests/e2e/test_bench.sh
# runs the scripts on a few items (figures only; nothing is timed there).
BENCH_BINS := $(RUSAGE) $(VALIDATE_CALL) $(PLAN_CALL) $(ALIAS_BENCH)
test test-unit test-e2e: $(BENCH_BINS)

# Requests and time against the emulator: plans (bench/github_bench.sh) and
# the first apply (bench/github_apply_bench.sh); figures only.
bench-github: $(BIN) $(ALIAS_BENCH) $(RUSAGE)
	@bench/github_bench.sh $(BIN)
	@bench/github_apply_bench.sh $(BIN)

# Installing, packaging and the other distributions' builds.
include $(sort $(wildcard mk/*.mk))

-include $(BUILD)/obj/bench/gql_alias_bench.d $(BUILD)/obj/bench/validate_call.d \
	$(BUILD)/obj/bench/plan_call.d $(BUILD)/obj/bench/rusage.d
-include $(OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(TEST_HOBJ:.o=.d) $(TEST_SRC:%.c=$(BUILD)/obj/%.d)
