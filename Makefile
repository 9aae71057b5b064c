# SPDX-License-Identifier: GPL-2.0
# The single entry point of the lazy-rss project. `make help` lists targets.

SHELL := /bin/bash
S := scripts

# Variables a user may set. The Makefile checks its own switches and LINE
# (a NAME of the registry ./lines; the default, its first line); the
# scripts check the values they take (ONLINE: scripts/lib/guest.sh; KERNEL, VARIANT:
# scripts/tree/build.sh, from the line's registry patches/LINE/kernels; CELLS, KERNELS, ITERS,
# REPS, CACHE: scripts/bench/plan.py through scripts/bench/bench.sh; GUESTS:
# scripts/bench/bench.sh), before any work, each in one place.
LINE ?=
KSRC ?=
KDIR ?=
QUICK ?= 0
RESUME ?= 0
ONLINE ?=
DRY_RUN ?= 0
KERNEL ?= patched
VARIANT ?= test
MUTANTS ?=
CELLS ?=
KERNELS ?=
ITERS ?=
REPS ?=
CACHE ?= 1
MODEL_NS ?=
GUESTS ?=

# The lines: the NAMEs of ./lines (scripts/lib/lines.sh reads the rest).
LINES := $(shell awk -F'\t+' '!/^\#/ && NF >= 6 { print $$1 }' lines)
ifeq ($(LINE),)
override LINE := $(firstword $(LINES))
endif
ifneq ($(words $(LINE)),1)
$(error LINE=$(LINE): want one line of ./lines: $(LINES))
endif
ifeq ($(filter $(LINE),$(LINES)),)
$(error LINE=$(LINE): no such line in ./lines; the lines are: $(LINES) (default: $(firstword $(LINES))))
endif
ifneq ($(SMP),)
$(error SMP=$(SMP): the online vCPUs of the test guests are ONLINE= now)
endif
ifeq ($(filter $(QUICK),0 1),)
$(error QUICK=$(QUICK): want 0 or 1)
endif
ifeq ($(filter $(RESUME),0 1),)
$(error RESUME=$(RESUME): want 0 or 1)
endif
ifeq ($(filter $(DRY_RUN),0 1),)
$(error DRY_RUN=$(DRY_RUN): want 0 or 1)
endif
ifeq ($(filter $(CACHE),0 1),)
$(error CACHE=$(CACHE): want 0 or 1)
endif
$(foreach p,$(MUTANTS),$(if $(wildcard mutants/$(LINE)/*$(p)*.patch),,$(error MUTANTS=$(MUTANTS): no mutants/$(LINE)/*$(p)*.patch)))
ifneq ($(KSRC),)
ifeq ($(wildcard $(KSRC)/Makefile),)
$(error KSRC=$(KSRC): not a kernel source tree)
endif
endif
export LINE KSRC ONLINE

.PHONY: help deps tree apply export kernel test-kernels kunit kunit-uml kunit-x86_64 kunit-i386 \
	selftest check check-series check-full check-kcsan mutate bench insn-profile irqsoff text-size lint clean distclean

help:
	@sed -n 's/^## //p' $(firstword $(MAKEFILE_LIST))

## deps          install the Debian packages every step needs (apt)
deps:
	@$(S)/setup/deps.sh build vm check bench

## (every target works on one line of ./lines: LINE=NAME, default the first; build/LINE/, patches/LINE/, results/LINE/)
## tree          base git tree in build/LINE/linux (+ worktree build/LINE/base) from the line's Debian package, series applied [KSRC=]
tree:
	@$(S)/setup/deps.sh build
	@$(S)/tree/tree.sh

## apply         apply the line's series (patches/LINE/) to your own git tree of the line: make apply KDIR=/path
apply:
	@test -n "$(KDIR)" || { echo "error: make apply needs KDIR=/path/to/linux-$(LINE).y" >&2; exit 2; }
	@$(S)/tree/apply.sh "$(KDIR)"

## export        patches/LINE/ and its series from build/LINE/linux; for the default line the mirror of added files and the README patch list too
export:
	@$(S)/tree/export.sh

## kernel        build one guest kernel: make kernel KERNEL=NAME (patches/LINE/kernels: base, patched, ideal, ...) VARIANT=test|bench|kasan|kcsan
kernel:
	@$(S)/tree/build.sh $(VARIANT) $(KERNEL)

## test-kernels  build the base and patched test kernels
test-kernels:
	@$(S)/tree/build.sh test base
	@$(S)/tree/build.sh test patched

## kunit         the series' KUnit suites on UML, x86_64 (the test kernel) and i386, ONLINE CPUs online (default 4)
kunit: kunit-uml kunit-x86_64 kunit-i386
kunit-uml kunit-x86_64 kunit-i386: tree
	@$(S)/check/kunit.sh $(@:kunit-%=%)

## selftest      kselftests in the guest (ONLINE CPUs online, default 4), on base and patched kernels: mm, proc, rseq
selftest: test-kernels
	@$(S)/check/selftest.sh base patched

## check         everything CI has time for: deps, lint, tooling unit tests, checkpatch, apply, mirror, builds, KUnit, module, two guests, kselftests (patched kernel); ends "N passed, N failed, N skipped"
check:
	@$(S)/setup/deps.sh build vm check
	@$(S)/check/check.sh

## check-series the checks of the series alone: checkpatch, apply, MAINTAINERS, W=1 and sparse, KUnit UML (make check of the default line runs it for the other lines)
check-series:
	@$(S)/setup/deps.sh build check
	@$(S)/check/check.sh --series

## check-full    check with the base test kernel as the control (module, kselftests, rseq outcomes compared) and rseq's basic_percpu_ops tests, then the slower kernels: without rseq/mm_cid (norseq: KUnit, rss_stat kselftests) and KUnit on arm64 (~70 min more, cold)
check-full:
	@$(S)/setup/deps.sh build vm check arm64
	@$(S)/check/check.sh --full

## check-kcsan   KUnit suites and the series' selftests on the patched KCSAN kernel (slow; not in check)
check-kcsan:
	@$(S)/setup/deps.sh build vm check
	@$(S)/check/kcsan.sh

## mutate        mutation score: each mutants/LINE/*.patch must fail a test [MUTANTS="pattern..."]
mutate:
	@$(S)/setup/deps.sh build vm check
	@$(S)/check/mutate.sh $(MUTANTS)

## bench         benchmarks of the kernels of patches/LINE/kernels; the full sweep into results/LINE/ (and the default line's into README), others into build/LINE/bench/report/ [QUICK=1] [CELLS="N/M ..."] [KERNELS="NAME ..."] [ITERS=N] [REPS=N] [RESUME=1: keep the boots of an interrupted run] [DRY_RUN=1: print the plan's boots and guest commands, build nothing] [BENCH_OUT=DIR] [CACHE=0: no cache model] [MODEL_NS="INSN L2HIT L2MISS": its costs] [GUESTS=N: guests at once]
bench:
	@$(S)/bench/bench.sh $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(RESUME)),--resume) \
		$(if $(filter 1,$(DRY_RUN)),--dry-run) \
		$(if $(CELLS),--cells "$(CELLS)") $(if $(KERNELS),--kernels "$(KERNELS)") \
		$(if $(ITERS),--iters "$(ITERS)") $(if $(REPS),--reps "$(REPS)") \
		--cache $(CACHE) $(if $(MODEL_NS),--model-ns "$(MODEL_NS)") $(if $(GUESTS),--guests "$(GUESTS)")

## insn-profile  instructions per operation of a bench workload on two kernels, by function: make insn-profile WORKLOAD=exit|exec|sh|thread|status KERNELS="A B" [CELL=4/255] [ITERS=500] [BEFORE="W ...": default, the workloads before it in make bench's rounds] [BENCH_OUT=DIR]
insn-profile:
	@$(S)/bench/insn-profile.sh $(if $(CELL),--cell "$(CELL)") $(if $(ITERS),--iters "$(ITERS)") \
		$(if $(findstring command,$(origin BEFORE)),--before "$(BEFORE)") \
		$(if $(BENCH_OUT),--out "$(BENCH_OUT)") $(WORKLOAD) $(KERNELS)

## irqsoff       longest interrupts-off section while /proc/PID/status of a threaded process is read, base vs patched, irqsoff tracer, -icount [CELLS="N/M ..."] [ITERS=reads] [BENCH_OUT=DIR, default build/irqsoff]
irqsoff:
	@$(S)/bench/irqsoff.sh $(if $(CELLS),--cells "$(CELLS)") $(if $(ITERS),--reads "$(ITERS)") \
		$(if $(BENCH_OUT),--out "$(BENCH_OUT)")

## text-size     kernel text each kernel adds to the reference (bloat-o-meter -t on the bench kernels' vmlinux) into results/LINE/text-size.md [KERNELS="NAME ...": default, the candidates] [BENCH_OUT=DIR]
text-size:
	@$(S)/bench/text-size.sh $(if $(BENCH_OUT),--out "$(BENCH_OUT)") $(KERNELS)

## lint          shellcheck the scripts
lint:
	@$(S)/check/lint.sh

## clean         remove the line's kernel build outputs, guest runs, logs and bench runs (keeps the trees and results/)
clean:
	rm -rf build/$(LINE)/vm build/$(LINE)/logs build/$(LINE)/bench build/$(LINE)/modcheck \
		build/$(LINE)/*/.out-* build/$(LINE)/*/.kunit*

## distclean     remove build/ entirely
distclean:
	rm -rf build
