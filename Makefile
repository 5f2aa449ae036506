# prof: build, test, demo, bench, install. GNU make; every output lands under $(BUILD).
PROF_VERSION := 0.1.0
BUILD        ?= build
PREFIX       ?= /usr/local
CXX          ?= g++
CC           ?= gcc

# ARCH_FLAGS (config.mk sets -march=x86-64-v3 -mpclmul where the CPU has AVX2, BMI2 and PCLMUL)
# lets simdjson's on-demand parser, which is compiled into our code, use its haswell kernel
# instead of the portable fallback (x86-64-v3 alone lacks PCLMUL, and simdjson then falls back);
# `make ARCH_FLAGS=` turns it off.
# -ffp-contract=off: no fused multiply-add, so every build (AVX2 or not, -O1 or -O2) computes
# the same doubles and records stay byte-stable across machines.
# Project flags first, the user's CXXFLAGS after them: `make CXXFLAGS=-O0` never drops -std.
PROF_CXXFLAGS := -std=c++20 -O2 -g -ffp-contract=off -Wall -Wextra -Wpedantic -Wshadow -MMD -MP -Ilib \
                 -DPROF_VERSION=\"$(PROF_VERSION)\"
PROF_LDFLAGS  := -Wl,--as-needed

LIB_SRC   := $(filter-out %_test.cpp,$(wildcard lib/prof/*.cpp lib/prof/*/*.cpp))
TEST_SRC  := $(wildcard lib/prof/*_test.cpp lib/prof/*/*_test.cpp)
TOOLS     := $(notdir $(patsubst %/,%,$(dir $(wildcard cmd/*/main.cpp))))
HELPERS   := $(basename $(notdir $(wildcard tests/helpers/*.c tests/helpers/*.cpp)))
FUZZ_TARGETS := $(basename $(notdir $(wildcard fuzz/*_fuzz.cpp)))

LIB_OBJ   := $(LIB_SRC:%.cpp=$(BUILD)/obj/%.o)
TEST_OBJ  := $(TEST_SRC:%.cpp=$(BUILD)/obj/%.o)
BINS      := $(TOOLS:%=$(BUILD)/bin/%)
HELPER_BINS := $(HELPERS:%=$(BUILD)/test/helpers/%)
LIBPROF   := $(BUILD)/libprof.a
UNIT      := $(BUILD)/test/unit
# Prints every record schema for scripts/records-check (tests/record_schemas.cpp).
SCHEMAS   := $(BUILD)/test/record-schemas
# Each fuzz target linked with the replay driver (fuzz/replay_main.cpp) and the project's own
# compiler: `make check` runs every reproducer in fuzz/corpus/ without clang.
FUZZ_REPLAY := $(FUZZ_TARGETS:%=$(BUILD)/test/fuzz/%)
# The libFuzzer build (`make fuzz`): clang, ASan + UBSan, its own tree.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)

# Every core by default: `make` compiles one object per CPU the process may use; an explicit
# -jN (or -j1) on the command line wins.
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

# `make` alone builds everything (config.mk, the first rule below, is not the goal).
.DEFAULT_GOAL := all
NODEPS_GOALS := clean help
ifeq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
else
# Dependencies are checked (and installed when missing) before anything compiles; the
# pkg-config flags are captured once into config.mk so every compile uses the same ones.
include $(BUILD)/config.mk
endif

# simdjson and fmt are compiled from Debian's sources of the installed versions
# (scripts/dep-sources) into libprof.a, and libstdc++ and libgcc linked statically, so that a
# program loads no C++ shared library: libstdc++.so's relocations and pages were most of a
# start on empty input. Where the sources cannot be had (no network, another version in the
# archive), config.mk links the shared libraries instead and says so.
$(BUILD)/config.mk: scripts/install-deps scripts/dep-sources
	@mkdir -p $(@D)
	@scripts/install-deps
	@{ echo "DEP_CFLAGS := $$(pkg-config --cflags simdjson fmt)"; \
	   if grep -qw avx2 /proc/cpuinfo && grep -qw bmi2 /proc/cpuinfo && grep -qw pclmulqdq /proc/cpuinfo; then \
	     echo "ARCH_FLAGS ?= -march=x86-64-v3 -mpclmul"; fi; \
	   if src=$$(scripts/dep-sources $(BUILD)/deps); then \
	     echo "DEP_SRC := $$(echo $$src)"; \
	     echo "DEP_LIBS := $$(pkg-config --libs zlib libisal) -ldl -lpthread"; \
	   else \
	     echo "make: linking the shared simdjson and fmt instead (each start about 0.7 ms slower)" >&2; \
	     echo "DEP_SRC :="; \
	     echo "DEP_LIBS := $$(pkg-config --libs simdjson fmt zlib libisal) -ldl -lpthread"; \
	   fi; } > $@.tmp
	@mv $@.tmp $@

# The dependencies' objects: their own warnings off, no sanitizer or fuzzer instrumentation
# (their code is not ours to check; the sanitizers' runtime still watches every allocation),
# and the C++ runtime linked statically where they are (a sanitizer build keeps the shared one,
# which its runtime expects).
DEP_OBJ := $(foreach s,$(DEP_SRC),$(BUILD)/obj/deps/$(basename $(notdir $(s))).o)
DEP_CXXFLAGS = -std=c++20 -O2 -g -ffp-contract=off -w $(ARCH_FLAGS) $(DEP_CFLAGS) $(filter-out -fsanitize%,$(CXXFLAGS))
define dep_object
$(BUILD)/obj/deps/$(basename $(notdir $(1))).o: $(1) $(BUILD)/config.mk Makefile
	@mkdir -p $$(@D)
	$$(CXX) $$(DEP_CXXFLAGS) -c $$< -o $$@
endef
$(foreach s,$(DEP_SRC),$(eval $(call dep_object,$(s))))
ifneq ($(DEP_SRC),)
ifeq ($(findstring -fsanitize,$(CXXFLAGS) $(LDFLAGS)),)
PROF_LDFLAGS += -static-libstdc++ -static-libgcc
endif
endif

.PHONY: all check check-cgroup2 unit demo bench install deb deb-check sanitize fuzz fuzz-build fuzz-targets clean help
# Objects of the mains are intermediates of a pattern chain; keep them so a rebuild relinks only.
.SECONDARY:
all: $(BINS) $(UNIT) $(SCHEMAS) $(HELPER_BINS) $(FUZZ_REPLAY)

# One compile line for every object of ours; PGO_FLAGS is set per object below.
COMPILE_CXX = $(CXX) $(PROF_CXXFLAGS) $(ARCH_FLAGS) $(DEP_CFLAGS) $(PGO_FLAGS) $(CXXFLAGS) -c $< -o $@
$(BUILD)/obj/%.o: %.cpp $(BUILD)/config.mk Makefile
	@mkdir -p $(@D)
	$(COMPILE_CXX)

# Profile-guided optimisation of prof-harvest's hot path: its row reader, profile builder and
# medians are branchy code whose common case the compiler cannot see. The objects of PGO_SRC are
# compiled once more with counters (under $(BUILD)/pgo/), linked into a counting prof-harvest that
# reads seeded generated rows (scripts/gen-harvest-rows), and the objects libprof.a holds are then
# compiled from what it counted (-fprofile-use; code the run never reached is optimised as without
# a profile: -fprofile-partial-training). The run is on one thread (--jobs 2 reads its chunks with
# the same code) and without address randomisation, so its counts are the same every time: a count
# file replaces the last one only when it differs, and a change elsewhere retrains but recompiles
# none of these. No option here changes floating-point results: output is the same bytes either
# way. GCC only; off in sanitizer and fuzz builds; `make PGO=0` turns it off.
PGO_SRC := lib/prof/harvest/harvest.cpp lib/prof/profile/profile.cpp lib/prof/profile/curve.cpp \
           lib/prof/core/median.cpp lib/prof/io/json_in.cpp lib/prof/io/input.cpp
PGO_ROWS ?= 400000
PGO ?= $(if $(findstring -fsanitize,$(CXXFLAGS) $(LDFLAGS))$(findstring clang,$(shell $(CXX) --version 2>/dev/null)),0,1)
ifeq ($(PGO),1)
PGO_OBJ     := $(PGO_SRC:%.cpp=$(BUILD)/obj/%.o)
PGO_GEN_OBJ := $(PGO_SRC:%.cpp=$(BUILD)/pgo/obj/%.o)
$(BUILD)/pgo/obj/%.o: %.cpp $(BUILD)/config.mk Makefile
	@mkdir -p $(@D)
	$(COMPILE_CXX)
$(PGO_GEN_OBJ): private PGO_FLAGS := -fprofile-generate
$(BUILD)/pgo/prof-harvest: $(BUILD)/obj/cmd/prof-harvest/main.o $(PGO_GEN_OBJ) $(filter-out $(PGO_OBJ),$(LIB_OBJ)) \
                           $(DEP_OBJ)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) -fprofile-generate $^ $(DEP_LIBS) -o $@
$(BUILD)/pgo/trained: $(BUILD)/pgo/prof-harvest scripts/gen-harvest-rows
	@rm -f $(PGO_GEN_OBJ:.o=.gcda)
	scripts/gen-harvest-rows $(PGO_ROWS) --seed 1 > $(BUILD)/pgo/rows.jsonl
	$$(setarch -R true 2>/dev/null && echo setarch -R) $(BUILD)/pgo/prof-harvest --jobs 1 $(BUILD)/pgo/rows.jsonl \
	  > /dev/null 2> $(BUILD)/pgo/train.log
	@for o in $(PGO_SRC:%.cpp=%); do \
	  cmp -s $(BUILD)/pgo/obj/$$o.gcda $(BUILD)/obj/$$o.gcda || { mkdir -p $$(dirname $(BUILD)/obj/$$o) && \
	    cp $(BUILD)/pgo/obj/$$o.gcda $(BUILD)/obj/$$o.gcda; }; \
	done
	@rm -f $(BUILD)/pgo/rows.jsonl
	@touch $@
$(PGO_OBJ:.o=.gcda): $(BUILD)/pgo/trained ;
$(PGO_OBJ): $(BUILD)/obj/%.o: $(BUILD)/obj/%.gcda
$(PGO_OBJ): private PGO_FLAGS := -fprofile-use -fprofile-partial-training
-include $(PGO_GEN_OBJ:.o=.d)
endif

$(LIBPROF): $(LIB_OBJ) $(DEP_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/obj/cmd/%/main.o $(LIBPROF)
	@mkdir -p $(@D)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) $< $(LIBPROF) $(DEP_LIBS) -o $@

$(UNIT): $(TEST_OBJ) $(LIBPROF)
	@mkdir -p $(@D)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) $(TEST_OBJ) $(LIBPROF) $(DEP_LIBS) -o $@

$(SCHEMAS): $(BUILD)/obj/tests/record_schemas.o $(LIBPROF)
	@mkdir -p $(@D)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) $< $(LIBPROF) $(DEP_LIBS) -o $@

$(BUILD)/test/fuzz/%: $(BUILD)/obj/fuzz/%.o $(BUILD)/obj/fuzz/replay_main.o $(LIBPROF)
	@mkdir -p $(@D)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) $< $(BUILD)/obj/fuzz/replay_main.o $(LIBPROF) $(DEP_LIBS) -o $@

# libFuzzer binaries (only in the `make fuzz` tree, where every object has fuzzer coverage).
$(BUILD)/fuzz/%: $(BUILD)/obj/fuzz/%.o $(LIBPROF)
	@mkdir -p $(@D)
	$(CXX) $(PROF_LDFLAGS) $(LDFLAGS) -fsanitize=fuzzer $< $(LIBPROF) $(DEP_LIBS) -o $@

fuzz-targets: $(FUZZ_BINS)

# Ground-truth children for the measurement tests: tiny C programs with known costs.
$(BUILD)/test/helpers/%: tests/helpers/%.c $(BUILD)/config.mk
	@mkdir -p $(@D)
	$(CC) -O1 -Wall -Wextra $< -o $@ -lpthread

check: all
	@scripts/check $(BUILD)

# The cgroup unit tests and the measurement ground truth inside real cgroup v2 kernels (Linux
# 6.1 and 6.12 under User-Mode Linux), from the root cgroup, from one holding a process and
# below a delegated ancestor, with a negative control on each kernel; skipped (counted) where
# UML cannot run. About 20 minutes.
check-cgroup2: all
	@scripts/check-cgroup2 $(BUILD)

unit: $(UNIT)
	$(UNIT)

demo: $(BINS)
	@scripts/demo $(BUILD)

bench: $(BINS)
	@scripts/bench $(BUILD)

install: $(BINS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	           $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7 \
	           $(DESTDIR)$(PREFIX)/share/prof
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	@# Each page's .TH line gets the version being installed and the date of the page's last
	@# commit (today's date outside a git checkout), so neither is typed by hand or goes stale.
	@for page in man/*.[157]; do \
	  d=$$(git log -1 --format=%cs -- "$$page" 2>/dev/null); [ -n "$$d" ] || d=$$(date +%F); \
	  dest=$(DESTDIR)$(PREFIX)/share/man/man$${page##*.}/$$(basename "$$page"); \
	  sed -E '1,/^\.TH/s/^(\.TH [^ ]+ [0-9]) "[^"]*" "prof [^"]*"/\1 "'"$$d"'" "prof $(PROF_VERSION)"/' "$$page" > "$$dest.tmp" && \
	  chmod 644 "$$dest.tmp" && mv "$$dest.tmp" "$$dest" && echo "install $$page -> $$dest ($$d)"; \
	done
	install -m 644 python/prof_worker.py python/prof_record.py share/prof/forecast_metadata.sql $(DESTDIR)$(PREFIX)/share/prof/
	if [ -f share/prof/baseline.json ]; then install -m 644 share/prof/baseline.json $(DESTDIR)$(PREFIX)/share/prof/; fi

# The Debian package of what `install` installs (PREFIX=/usr), assembled by dpkg-buildpackage and
# debhelper from the binaries built here (packaging/debian/ is its debian/ folder), then checked
# by lintian: an error fails (scripts/make-deb). Leaves $(BUILD)/deb/prof_$(PROF_VERSION)_ARCH.deb.
deb: $(BINS)
	@scripts/install-deps deb
	@scripts/make-deb $(BUILD) $(PROF_VERSION)

# The package installed with dpkg into a scratch root and used from there: every program, the
# Python helpers, the baseline, every manual page's example (scripts/deb-check; CI runs it).
deb-check: deb
	@scripts/deb-check $(BUILD)

# AddressSanitizer + UBSan in a separate tree, then the whole check suite over it:
# scripts/sanitize-check sends every sanitizer report, a child's included, to a log file and
# fails the run on any, whatever a test made of the exit code or the stderr. UBSan stays
# recoverable here (unlike the fuzz build): g++'s libubsan writes a fatal report to stderr only,
# never to its log_path, where a test that captures a child's stderr would hide it.
sanitize:
	$(MAKE) BUILD=build-sanitize \
	        CXXFLAGS="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer" \
	        LDFLAGS="-fsanitize=address,undefined" all
	@scripts/sanitize-check build-sanitize

# Every fuzz target for FUZZ_SECONDS under libFuzzer with ASan + UBSan, one after another, each
# from its corpus in fuzz/corpus/ (copied: the source tree is never written); findings and a
# summary land in $(FUZZ_BUILD)/. Needs clang and libFuzzer (`scripts/install-deps fuzz`).
fuzz: fuzz-build
	@scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The fuzz targets built with clang alone (no run): CI builds them so a clang-only break shows.
fuzz-build:
	@scripts/install-deps fuzz
	$(MAKE) BUILD=$(FUZZ_BUILD) CXX=clang++ CC=clang \
	        CXXFLAGS="-O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
	        LDFLAGS="-fsanitize=address,undefined" fuzz-targets

clean:
	rm -rf $(BUILD) build-sanitize $(FUZZ_BUILD)

help:
	@echo "targets: all check check-cgroup2 demo bench install PREFIX=... deb deb-check sanitize fuzz FUZZ_SECONDS=N fuzz-build clean"

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(TOOLS:%=$(BUILD)/obj/cmd/%/main.d) \
         $(FUZZ_TARGETS:%=$(BUILD)/obj/fuzz/%.d) $(BUILD)/obj/fuzz/replay_main.d
