# SPDX-License-Identifier: GPL-2.0
#
# xkernel: one build for the library and CLI (build/), the kernel module
# (kmod/, Kbuild against the target kernel's headers) and the tests.
#
#   make            library, xk, unit tests; the module once a kernel is fetched
#   make kmod       the module, against the target kernel (build/xk kernel
#                   fetch; which one: build/xk kernel list)
#   make check      every test: unit, CLI, guest (see tests/run.sh)
#   make check-debian  the packages on a Debian system with systemd, in the
#                   guest (tests/debian/run.sh; .ci/run runs it after check)
#   make demo       the main job (see README.md)

.DEFAULT_GOAL := all
CC      ?= gcc
BUILD   := build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers \
           -MMD -MP

# ---- libxk: one archive per part; arrows point down only ----
#
#   tools/xk  ->  analysis, runtime, provision  ->  scope  ->  core  ->  abi
#   tools/klp-build  ->  klp  ->  analysis (its internals too: the object model)
#
# A part compiles against a view of include/ that holds only the public
# headers it may use (build/include/PART/xk/), its own folder and core's
# internals: an #include of anything else fails to compile. Analysis and
# runtime never see each other; only analysis sees capstone and libelf.
LIB_PARTS := core scope provision analysis runtime klp
VIEW_core      := core.h
VIEW_scope     := core.h scope.h abi
VIEW_provision := core.h provision.h
VIEW_analysis  := core.h provision.h scope.h analysis.h abi
VIEW_runtime   := core.h scope.h runtime.h abi
VIEW_klp       := core.h provision.h scope.h analysis.h klp.h abi

define lib_part
$(1)_SRCS := $$(wildcard lib/$(1)/*.c lib/$(1)/*/*.c)
$(1)_OBJS := $$($(1)_SRCS:%.c=$(BUILD)/%.o) $$($(1)_EXTRA)
$(BUILD)/include/$(1)/.stamp: Makefile
	@rm -rf $(BUILD)/include/$(1) && mkdir -p $(BUILD)/include/$(1)/xk
	@for h in $(VIEW_$(1)); do ln -s $(CURDIR)/include/xk/$$$$h $(BUILD)/include/$(1)/xk/$$$$h; done
	@touch $$@
$$($(1)_OBJS): CPPFLAGS := -I$(BUILD)/include/$(1) -Ilib/$(1) $$($(1)_INTERNALS) -Ilib/core
$$($(1)_OBJS): | $(BUILD)/include/$(1)/.stamp
$(BUILD)/libxk-$(1).a: $$($(1)_OBJS)
	rm -f $$@ && $$(AR) rcs $$@ $$^
endef
provision_EXTRA := $(BUILD)/vm/guest-init.o	# the guest's init, linked in
klp_INTERNALS := -Ilib/analysis
$(foreach p,$(LIB_PARTS),$(eval $(call lib_part,$(p))))

LIB_ARCHIVES := $(patsubst %,$(BUILD)/libxk-%.a,runtime analysis provision scope core)
# the livepatch the benchmarks compare with: apart from the product
KLP_ARCHIVES := $(BUILD)/libxk-klp.a $(LIB_ARCHIVES)
# an application that only loads tables: no capstone, no libelf
RUNTIME_ARCHIVES := $(patsubst %,$(BUILD)/libxk-%.a,runtime scope core)
LDLIBS  := -lbpf -lelf -lcapstone

XK_SRCS  := $(wildcard tools/xk/*.c)
XK_OBJS  := $(XK_SRCS:%.c=$(BUILD)/%.o)
$(XK_OBJS): CPPFLAGS := -Iinclude -Ilib/core
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

XK      := $(BUILD)/xk
# the target kernel's headers, from the cache (empty until xk kernel fetch,
# or when the cache holds several kernels and none is chosen: xk kernel list)
KHEADERS ?= $(shell $(XK) -q kernel info --field headers 2>/dev/null)
# where builds for the target run: its toolchain root (a kernel of another
# Debian release than this host's: xk help kernel exec), or here
KEXEC   := $(XK) -q kernel exec --

# eBPF policies (Xk-tunes): examples in bpf/, test fixtures in tests/
BPF_OUT   := $(BUILD)/bpf
BPF_SRCS  := $(wildcard bpf/*.bpf.c tests/fixtures/policies/*.bpf.c bench/*.bpf.c)
POLICIES  := $(patsubst %.bpf.c,$(BPF_OUT)/%.bpf.o,$(notdir $(BPF_SRCS)))
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
              -I$(BPF_OUT) -I$(BPF_OUT)/glue -Ibpf -Iinclude/xk/abi
vpath %.bpf.c bpf tests/fixtures/policies bench

.PHONY: all kmod policies check demo clean man
all: $(XK) $(UNIT_BINS) $(BUILD)/layers.ok
	@if [ -n "$(KHEADERS)" ]; then $(MAKE) --no-print-directory kmod && \
		if [ -n "$(KBTF)" ]; then $(MAKE) --no-print-directory policies; \
		else echo "make: the target kernel has no BTF: no eBPF policies (they could not load)"; fi; fi

policies: $(POLICIES)

# the types of the target kernel, from its BTF (CO-RE relocates the rest):
# the headers' vmlinux (6.12's headers ship one), else the image's own,
# extracted at fetch (6.1's headers have none); empty when neither has a
# .BTF section (a kernel built without it, which runs no policy)
KBTF := $(shell for f in "$(KHEADERS)/vmlinux" \
	"$$($(XK) -q kernel info --field dir 2>/dev/null)/vmlinux"; do \
	[ -f "$$f" ] && readelf -S "$$f" 2>/dev/null | grep -q ' \.BTF ' && \
	{ echo "$$f"; break; }; done)
$(BPF_OUT)/vmlinux.h: | $(XK)
	@if [ -z "$(KHEADERS)" ]; then \
		echo "make policies: no target kernel:" >&2; $(XK) kernel info >/dev/null; exit 1; fi
	@if [ -z "$(KBTF)" ]; then \
		echo "make policies: the target kernel has no BTF" >&2; exit 1; fi
	@mkdir -p $(dir $@)
	bpftool btf dump file $(KBTF) format c > $@.tmp && mv $@.tmp $@

# a policy's glue: one header per constant it includes as "NAME.xk.h",
# made by xk gen from the scope table (analysis cached: fractions of a second);
# the catalog's constants, else the golden module's (test fixtures)
GOLDEN_CATALOG := tests/fixtures/golden/golden.conf
$(BPF_OUT)/%.bpf.o: %.bpf.c $(BPF_OUT)/vmlinux.h bpf/xk_policy.h \
		$(wildcard include/xk/abi/*.h) $(XK) catalog/constants.conf
	@mkdir -p $(BPF_OUT)/glue
	@for k in $$(sed -n 's/^#include "\([A-Z0-9_]*\)\.xk\.h"/\1/p' $<); do \
		echo "  GLUE    $$k"; \
		$(XK) -q gen $$k --glue $(BPF_OUT)/glue/$$k.xk.h >/dev/null 2>&1 || \
		$(XK) -q gen --catalog $(GOLDEN_CATALOG) $$k \
			--glue $(BPF_OUT)/glue/$$k.xk.h >/dev/null || exit 1; done
	clang $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/vm/guest-init.o: vm/guest-init.S vm/guest-init.sh
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

# the runtime half links without libelf and capstone, and no part's files
# call each other in a circle (scripts/check-layers.sh)
$(BUILD)/layers.ok: $(KLP_ARCHIVES) scripts/check-layers.sh scripts/structure-map.sh
	scripts/check-layers.sh $(BUILD)
	@touch $@

$(XK): $(XK_OBJS) $(LIB_ARCHIVES)
	$(CC) $(CFLAGS) -o $@ $(XK_OBJS) $(LIB_ARCHIVES) $(LDLIBS)

# unit tests see the internals of the parts they test
$(BUILD)/tests/%: tests/unit/%.c $(KLP_ARCHIVES) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(patsubst %,-Ilib/%,$(LIB_PARTS)) $(CFLAGS) -o $@ $< \
		$(KLP_ARCHIVES) $(LDLIBS)

kmod: $(XK)
	@if [ -z "$(KHEADERS)" ]; then \
		echo "make kmod: no target kernel:" >&2; $(XK) kernel info >/dev/null; exit 1; fi
	$(KEXEC) $(MAKE) -C $(KHEADERS) M=$(CURDIR)/kmod modules
	$(KEXEC) $(MAKE) -C $(KHEADERS) M=$(CURDIR)/tests/fixtures/golden modules

check: all
	tests/run.sh

# make deb's packages installed on a Debian system with systemd, DKMS
# building the module, in the guest (the image: scripts/debian-image.sh,
# cached); minutes under TCG, so not part of make check
.PHONY: check-debian
check-debian: all deb
	tests/debian/run.sh

# the guest tests every kernel must pass, on kernels other than the
# default (KERNELS="RELEASE...", Debian 12's 6.1 cloud kernel and Debian
# 13's 6.12 unless given), each fetched into a cache of its own:
# tests/kernels.sh
.PHONY: check-kernels
check-kernels: all
	tests/kernels.sh

# a retuned kernel against the kernel compiled with the value: one constant
# at least of every span form set live and, on the same workload, compiled
# in by a livepatch (the golden module: compiled with the values), in the
# deterministic guest: tests/fidelity/ab.sh
.PHONY: check-fidelity
check-fidelity: all
	KHEADERS=$(KHEADERS) tests/fidelity/ab.sh

# the same tests on a kernel built from the cached source with a small
# configuration, added with xk kernel use --build-dir: tests/selfbuilt.sh
.PHONY: check-selfbuilt
check-selfbuilt: all
	tests/selfbuilt.sh

# docs/man/xk*.1 from the help pages in the binary (tests/cli checks them)
man: $(XK)
	tools/xk/gen-man.sh $(XK) docs/man

# RELEASE=R: another kernel (scripts/demo.sh)
demo: all
	RELEASE="$(RELEASE)" scripts/demo.sh

clean:
	@if [ -n "$(KHEADERS)" ] && [ -x $(XK) ]; then \
		$(KEXEC) $(MAKE) -C $(KHEADERS) M=$(CURDIR)/kmod clean; \
		$(KEXEC) $(MAKE) -C $(KHEADERS) M=$(CURDIR)/tests/fixtures/golden clean; fi
	rm -rf $(BUILD)

# (not those of the kernels' trees and copies under build/)
-include $(shell find $(BUILD) \( -path $(BUILD)/kernels -o -path $(BUILD)/selfbuilt -o -path $(BUILD)/fidelity \) -prune -o -name '*.d' -type f -print 2>/dev/null)

# ---- bench/lebench: a LEBench-style suite of core operations ----
# static, so the guest needs nothing of it (bench/lebench.sh, docs/lebench.md)
$(BUILD)/bench/lebench: bench/lebench.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -static -pthread -o $@ $< -lm
all: $(BUILD)/bench/lebench

# bench/compare.sh's livepatch, built the kpatch way (lib/klp/)
$(BUILD)/klp-build: tools/klp-build/klp-build.c $(KLP_ARCHIVES)
	$(CC) -Iinclude $(CFLAGS) -o $@ $< $(KLP_ARCHIVES) $(LDLIBS)
all: $(BUILD)/klp-build

# every figure of bench/: runtime costs, the LEBench-style suite, then
# xkernel against a livepatch of the same constant (docs/compare.md)
.PHONY: bench soak
bench: all
	bench/runtime.sh
	bench/lebench.sh
	bench/compare.sh

# the soak: XK_SOAK_CYCLES (1000) load/set/settle/unload cycles in the three
# modes under fio, iperf3 and a fork storm, in the guest (tests/soak/)
$(BUILD)/soak/soak_cycles: tests/soak/soak_cycles.c $(LIB_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS) -o $@ $< $(LIB_ARCHIVES) $(LDLIBS)
all: $(BUILD)/soak/soak_cycles
soak: all
	build/xk -q gen BLK_MAX_REQUEST_COUNT >/dev/null
	build/xk vm run --timeout 5400 -- tests/soak/soak-guest.sh

# xkernel-scopes-RELEASE: the scope tables of a kernel release, shipped
# (scripts/scopes-deb.sh; RELEASE=R, CONSTANTS="A B", KEEP_GOING=1)
.PHONY: scopes-deb
scopes-deb: all
	scripts/scopes-deb.sh

# Debian packages (debian/): xkernel, xkernel-dkms, xkernel-dev, built with
# dpkg-buildpackage (its own build directory, debian/build) and moved from
# ../ to build/deb/; lintian checks them when it is installed
.PHONY: deb
deb:
	dpkg-buildpackage -us -uc -b
	@mkdir -p $(BUILD)/deb
	@v=$$(dpkg-parsechangelog -S Version); \
	mv ../xkernel_$${v}_*.changes ../xkernel_$${v}_*.buildinfo \
		../xkernel*_$${v}_*.deb $(BUILD)/deb/
	@if command -v lintian >/dev/null; then \
		lintian --fail-on error $(BUILD)/deb/*.changes; fi
	@ls $(BUILD)/deb/*.deb
