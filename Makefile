# SPDX-License-Identifier: GPL-2.0
# The single entry point of the lazy-rss project. `make help` lists targets.

SHELL := /bin/bash
S := scripts

# Variables a user may set, with the values they may take.
KSRC ?=
KDIR ?=
QUICK ?= 0
RESUME ?= 0
SMP ?=
KERNEL ?= patched
VARIANT ?= test
MUTANTS ?=

ifeq ($(filter $(QUICK),0 1),)
$(error QUICK=$(QUICK): want 0 or 1)
endif
ifeq ($(filter $(RESUME),0 1),)
$(error RESUME=$(RESUME): want 0 or 1)
endif
ifneq ($(SMP),)
ifeq ($(shell [[ "$(SMP)" =~ ^[1-9][0-9]*$$ ]] && [ $(SMP) -le 255 ] && echo ok),)
$(error SMP=$(SMP): want a number of vCPUs from 1 to 255)
endif
endif
ifeq ($(filter $(KERNEL),base patched ideal),)
$(error KERNEL=$(KERNEL): want base, patched or ideal)
endif
ifeq ($(filter $(VARIANT),test bench kasan kcsan),)
$(error VARIANT=$(VARIANT): want test, bench, kasan or kcsan)
endif
ifneq ($(MUTANTS),)
ifeq ($(wildcard mutants/*$(MUTANTS)*.patch),)
$(error MUTANTS=$(MUTANTS): no mutants/*$(MUTANTS)*.patch)
endif
endif
ifneq ($(KSRC),)
ifeq ($(wildcard $(KSRC)/Makefile),)
$(error KSRC=$(KSRC): not a kernel source tree)
endif
endif
export KSRC SMP

.PHONY: help deps tree apply export kernel kernels kunit kunit-uml kunit-x86_64 kunit-i386 \
	selftest check check-kcsan mutate bench lint clean distclean

help:
	@sed -n 's/^## //p' $(firstword $(MAKEFILE_LIST))

## deps          install the Debian packages every step needs (apt)
deps:
	@$(S)/deps.sh build vm check bench

## tree          base git tree in build/linux (+ worktree build/base), series applied [KSRC=]
tree:
	@$(S)/deps.sh build
	@$(S)/tree.sh

## apply         apply patches/ to your own 6.12.y git tree: make apply KDIR=/path
apply:
	@test -n "$(KDIR)" || { echo "error: make apply needs KDIR=/path/to/linux-6.12.y" >&2; exit 2; }
	@$(S)/apply.sh "$(KDIR)"

## export        patches/, series, the mirror of added files and the README patch list from build/linux
export:
	@$(S)/export.sh

## kernel        build one guest kernel: make kernel KERNEL=base|patched|ideal VARIANT=test|bench|kasan|kcsan
kernel: tree
	@$(S)/build.sh $(VARIANT) $(KERNEL) >/dev/null

## kernels       build the base and patched test kernels
kernels: tree
	@$(S)/build.sh test base >/dev/null
	@$(S)/build.sh test patched >/dev/null

## kunit         the series' KUnit suites on UML, x86_64 (the test kernel) and i386, QEMU -smp SMP
kunit: kunit-uml kunit-x86_64 kunit-i386
kunit-uml kunit-x86_64 kunit-i386: tree
	@$(S)/kunit.sh $(@:kunit-%=%)

## selftest      kselftests in the guest (-smp SMP, default 4), on base and patched kernels
selftest: kernels
	@$(S)/selftest.sh base patched

## check         everything: deps, lint, checkpatch, apply, mirror, KUnit, kselftests; ends "N passed, N failed, N skipped"
check:
	@$(S)/deps.sh build vm check
	@$(S)/check.sh

## check-kcsan   KUnit suites and the series' selftests on the patched KCSAN kernel (slow; not in check)
check-kcsan:
	@$(S)/deps.sh build vm check
	@$(S)/kcsan.sh

## mutate        mutation score: each mutants/*.patch must fail a test [MUTANTS=pattern]
mutate:
	@$(S)/deps.sh build vm check
	@$(S)/mutate.sh $(MUTANTS)

## bench         fork/exec/exit benchmarks of the bench kernels, into results/ and README [QUICK=1] [RESUME=1: keep the boots of an interrupted run]
bench:
	@$(S)/deps.sh build vm bench
	@$(S)/bench.sh $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(RESUME)),--resume)

## lint          shellcheck the scripts
lint:
	@$(S)/deps.sh check
	@shellcheck $(S)/*.sh $(S)/vm .ci/run tools/bench/bench-guest

## clean         remove kernel build outputs and guest runs (keeps the trees)
clean:
	rm -rf build/vm build/logs build/linux/.out-* build/base/.out-* build/ideal/.out-* \
		build/linux/.kunit build/linux/.kunit-i386 build/mutate/.out-* build/mutate/.kunit*

## distclean     remove build/ entirely
distclean:
	rm -rf build
