# driple: one binary (explorer + command line) on one engine library.
# make | make test | make san | make bench | make fuzz | make run | make deps | make assets
CC      ?= cc
PKGS_ENGINE := libcjson openblas libgvc
PKGS_TUI    := ncursesw
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wwrite-strings -Wformat=2 -Wundef \
           -Werror=implicit-function-declaration
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?= -O2 -g
BUILD   ?= build
DEPCFLAGS := $(shell pkg-config --cflags $(PKGS_ENGINE) $(PKGS_TUI) 2>/dev/null)
LIBS      := $(shell pkg-config --libs $(PKGS_ENGINE) $(PKGS_TUI) 2>/dev/null) -lm -lpthread -ldl
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -MMD -MP \
             -Iengine/include -Iengine/src $(DEPCFLAGS)

ENGINE_SRC := $(sort $(wildcard engine/src/*.c))
TUI_SRC    := $(sort $(wildcard tui/*.c))
TEST_SRC   := $(sort $(wildcard tests/test_*.c))
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
# Tests link the TUI objects too (app, layout, commands), all but main.o.
TUI_LIB_OBJ := $(filter-out $(BUILD)/tui/main.o,$(TUI_OBJ))
TEST_BIN   := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
LIB        := $(BUILD)/libdp.a
BIN        := $(BUILD)/driple

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.SECONDARY:
.PHONY: all test san bench fuzz run deps check-deps clean assets
all: check-deps $(BIN)

Q := $(if $(V),,@)
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC    $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(ENGINE_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(TUI_OBJ) $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(TUI_OBJ) $(LIB) $(LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TUI_LIB_OBJ) $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TUI_LIB_OBJ) $(LIB) $(LIBS)

# Each test binary runs from the repository root; the end-to-end scripts in tests/*.sh after.
test: check-deps $(BIN) $(TEST_BIN)
	@DRIPLE=$(BIN) BUILD=$(BUILD) sh tests/run_all.sh $(TEST_BIN)

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

-include $(ENGINE_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(TEST_BIN:=.d)

# Record tests (H): fake shared libraries that the tests load through dlopen (fake NVML).
$(BUILD)/tests/libfake_%.so: tests/data/record/fake_%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c11 $(WARN) -O1 -g -shared -fPIC -o $@ $<
$(BUILD)/tests/test_record: $(BUILD)/tests/libfake_nvml.so
