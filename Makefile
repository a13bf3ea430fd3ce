# driple: one binary (explorer + command line) on one engine library.
# make | make test | make san | make bench | make fuzz | make run | make deps | make assets | make lint
# make man | make install PREFIX=/usr/local [DESTDIR=...]
CC      ?= cc
PKGS_ENGINE := libcjson libgvc
PKGS_TUI    := ncursesw
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wwrite-strings -Wformat=2 -Wundef \
           -Werror=implicit-function-declaration
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?= -O2 -g
BUILD   ?= build
# Per-layer flags: each layer sees only what it may use, so a wrong include fails to compile.
#   engine: its own headers, cJSON (the JSON loaders); render adds Graphviz; never curses (the
#           inspector network's kernels are gnn's own: no BLAS).
#   cli:    the engine's public headers (dp/) and cJSON (JSON output); not engine/src.
#   tui:    the engine's public headers and ncursesw; not engine/src, not cJSON.
#   tests:  everything (they reach into *_impl.h where they test internals).
BASE_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -MMD -MP
CJSON_CFLAGS  := $(shell pkg-config --cflags libcjson 2>/dev/null)
GVC_CFLAGS    := $(shell pkg-config --cflags libgvc 2>/dev/null)
CURSES_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null)
ENGINE_CFLAGS  = $(BASE_CFLAGS) -Iengine/include -Iengine/src $(CJSON_CFLAGS)
CLI_CFLAGS     = $(BASE_CFLAGS) -Iengine/include $(CJSON_CFLAGS)
TUI_CFLAGS     = $(BASE_CFLAGS) -Iengine/include -Itui $(CURSES_CFLAGS)
TEST_CFLAGS    = $(BASE_CFLAGS) -Iengine/include -Iengine/src -Itui $(CJSON_CFLAGS) \
                 $(CURSES_CFLAGS)
LIBS      := $(shell pkg-config --libs $(PKGS_ENGINE) $(PKGS_TUI) 2>/dev/null) -lm -lpthread -ldl

ENGINE_SRC := $(sort $(wildcard engine/src/*/*.c))
CLI_SRC    := $(sort $(wildcard cli/*.c))
TUI_SRC    := $(sort $(wildcard tui/*.c tui/views/*.c))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
# The autograd tape: the tests' cross-check of the fast engine, linked only into tests.
TAPE_SRC   := $(sort $(wildcard tests/tape/*.c))
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
# Tests link the front ends' objects too (app, layout, commands), all but main.o.
FRONT_LIB_OBJ := $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) $(TUI_OBJ)
TEST_BIN   := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TAPE_LIB   := $(BUILD)/tests/libtape.a
LIB        := $(BUILD)/libdp.a
BIN        := $(BUILD)/driple

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.SECONDARY:
.PHONY: all test san bench fuzz run deps check-deps clean assets man install FORCE
all: check-deps $(BIN)

Q := $(if $(V),,@)
define compile
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC    $<")
	$(Q)$(CC) $(1) -c $< -o $@
endef
# The kernels are written for the vectoriser, and built at -O2 whatever CFLAGS says (a sanitizer
# build's -O1 left them ~20x slower, past the explorer tests' time limits; they stay
# instrumented): GCC's dynamic cost model takes their blocked loops (its default at -O2 leaves
# the GRU and LSTM cells scalar), -fno-trapping-math lets it turn the activations' clamps into
# selects (no FP exception is ever looked at), and contracting a * b + c into one FMA where the
# level has it is what the hand-written products do anyway.
VECT_CFLAGS := -O2 $(shell $(CC) -Werror -fvect-cost-model=dynamic -E -x c /dev/null >/dev/null \
                 2>&1 && echo -fvect-cost-model=dynamic) -ffp-contract=fast -fno-trapping-math \
                 -fno-sanitize=address
$(BUILD)/engine/src/gnn/kernels%.o: engine/src/gnn/kernels%.c
	$(call compile,$(ENGINE_CFLAGS) $(VECT_CFLAGS))
$(BUILD)/engine/src/render/%.o: engine/src/render/%.c
	$(call compile,$(ENGINE_CFLAGS) $(GVC_CFLAGS))
$(BUILD)/engine/%.o: engine/%.c
	$(call compile,$(ENGINE_CFLAGS))
$(BUILD)/cli/%.o: cli/%.c
	$(call compile,$(CLI_CFLAGS))
$(BUILD)/tui/%.o: tui/%.c
	$(call compile,$(TUI_CFLAGS))
$(BUILD)/tests/%.o: tests/%.c
	$(call compile,$(TEST_CFLAGS))

$(LIB): $(ENGINE_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

# The version --version prints: VERSION, and the commit when built from git. version.h is
# rewritten only when that text changes, so only main.o is rebuilt after a commit.
VERSION_TEXT := $(shell cat VERSION 2>/dev/null || echo unknown)$(shell git describe --always \
                  --dirty 2>/dev/null | sed 's/^/ (git /; s/$$/)/')
$(BUILD)/version.h: FORCE
	@mkdir -p $(dir $@)
	@echo '#define DRIPLE_VERSION "$(VERSION_TEXT)"' >$@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@
$(BUILD)/cli/main.o: CLI_CFLAGS += -I$(BUILD)
$(BUILD)/cli/main.o: $(BUILD)/version.h

$(BIN): $(CLI_OBJ) $(TUI_OBJ) $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(TUI_OBJ) $(LIB) $(LIBS)

$(TAPE_LIB): $(TAPE_SRC:%.c=$(BUILD)/%.o)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TAPE_LIB) $(FRONT_LIB_OBJ) $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TAPE_LIB) $(FRONT_LIB_OBJ) $(LIB) $(LIBS)

# Each test binary runs from the repository root; the end-to-end scripts in tests/*.sh after.
test: check-deps $(BIN) $(TEST_BIN) lint
	@DRIPLE=$(BIN) BUILD=$(BUILD) sh tests/run_all.sh $(TEST_BIN)

# Structure rules (tools/lint.sh): functions of at most 150 lines, no call cycles between source
# files or subsystems, no op-name comparisons in sim/ and tfgraph/, the layers; the violations
# still open are listed, with their owners, in tools/lint_allow.txt.
.PHONY: lint
lint: check-deps $(BIN)
	@sh tools/lint.sh $(BUILD)

san:
	$(MAKE) BUILD=build-san CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" test

bench: $(BIN)
	@sh bench/run.sh $(BIN)

fuzz:
	@sh fuzz/run.sh

run: all
	$(BIN)

assets: $(BIN)
	@sh assets/make_assets.sh $(BIN)

deps:
	@sh tools/deps.sh

check-deps:
	@pkg-config --exists $(PKGS_ENGINE) $(PKGS_TUI) || { sh tools/deps.sh --check; exit 1; }

clean:
	rm -rf build build-san build-fuzz

# The man page and the bash completion are generated from the option tables the parser reads.
MAN := $(BUILD)/driple.1
COMPLETION := $(BUILD)/driple.bash
man: $(MAN)
$(MAN): $(BIN)
	$(Q)$(BIN) --man >$@
$(COMPLETION): $(BIN)
	$(Q)$(BIN) --completion bash >$@

# PREFIX/bin/driple finds its files in PREFIX/share/driple (dp_shipped_path's last candidate).
PREFIX  ?= /usr/local
DATADIR  = $(DESTDIR)$(PREFIX)/share/driple
install: all $(MAN) $(COMPLETION)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DATADIR)
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/driple
	install -m 644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/driple.1
	install -m 644 $(COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/driple
	cp -R assets samples $(DATADIR)/
	rm -f $(DATADIR)/assets/*.sh

-include $(ENGINE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(TEST_BIN:=.d) \
         $(TAPE_SRC:%.c=$(BUILD)/%.d)

# Record tests (H): fake shared libraries that the tests load through dlopen (fake NVML).
$(BUILD)/tests/libfake_%.so: tests/data/record/fake_%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -o $@ $<
$(BUILD)/tests/test_record: $(BUILD)/tests/libfake_nvml.so
