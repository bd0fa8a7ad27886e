# frlock: the 2003 fast reader/writer lock as a Linux 6.1 patch series,
# booted in QEMU and traced from inside the guest.
#
#   make test     install what is missing, build, boot, run every check
#   make test-long  make test, then the checker kernels and a long torture run
#   make test-fresh make test and make run in a fresh minimal Debian 12 chroot
#   make bench    measure frlock against rwlock, seqlock and the stock kernel
#   make run      boot the guest and show frlock's tracepoints under load
#   make shell    an interactive shell in the guest
#   make lab NAME=<lab>  a teaching lab in the guest (labs/README.md)
#   make fixtures record the dashboards' fixture from a run of the current tools
#   make kernel   build (or reuse) the frlock kernel (both series);
#                 kernel-seqcount: the seqcount series alone; kernel-stock:
#                 neither; kernel-lockdep, kernel-kcsan: with the checkers
#   make rootfs   build (or reuse) the guest's initramfs
#   make bpf      build the libbpf tools (frlockstat) against the frlock kernel
#   make deps     install the Debian packages the project needs

SHELL := /bin/bash
.DELETE_ON_ERROR:

# Knobs for `make run` and `make shell`.
DURATION ?= 20
THREADS ?= 2
WRITERS ?= 200
SMP ?= 2
MEM ?= 2048
ACCEL ?= auto

# lld (and lld-14, which owns the linker /usr/bin/ld.lld resolves to): its
# ld.lld links kernel/coverage's clang (LLVM=1) build.
# gcc-s390x-linux-gnu: kernel/coverage's s390 build (noinstr arch_cpu_idle()).
DEB_PACKAGES := lld lld-14 clang llvm linux-source-6.1 linux-source-6.12 build-essential flex bison bc \
	gcc-s390x-linux-gnu \
	cpio xz-utils libelf-dev libssl-dev dwarves git python3 python3-ply python3-git \
	qemu-system-x86 qemu-utils busybox-static bpftrace bpftool libbpf-dev \
	zlib1g-dev libjs-chart.js chromium kmod sparse gdb \
	gcc-aarch64-linux-gnu qemu-system-arm mmdebstrap procps python3-websocket \
	iproute2 prometheus prometheus-node-exporter ccache linux-perf trace-cmd stress-ng fio rt-tests \
	gcc-i686-linux-gnu libbpf-dev:i386 libelf-dev:i386 zlib1g-dev:i386

# The i386 guest (make test-long): Debian's i386 architecture added to dpkg
# for the :i386 packages above (frlockstat linked for i386 by
# gcc-i686-linux-gnu; gcc-multilib would remove gcc-aarch64-linux-gnu), and
# busybox-static:i386, which would replace the host's busybox-static, only
# downloaded (apt-get download) into I386_DEBS for host/mkrootfs --arch i386.
I386_DEBS := /var/cache/frlock

# Packages whose Debian service would listen on every address: when make
# deps installs them, it stops and disables that service.
DEB_SERVICES := prometheus prometheus-node-exporter

.PHONY: all deps kernel kernel-seqcount kernel-stock kernel-lockdep kernel-kcsan rootfs bpf run shell \
	test test-host test-guest test-long test-fresh bench lab fixtures

all: kernel rootfs bpf

deps:
	@if ! dpkg --print-foreign-architectures | grep -qx i386; then \
		echo "deps: adding Debian's i386 architecture (the i386 guest's libraries)"; \
		{ dpkg --add-architecture i386 && apt-get update -q; } >/tmp/frlock-deps.log 2>&1 || \
			{ echo "deps: dpkg --add-architecture i386 failed (log: /tmp/frlock-deps.log)" >&2; exit 1; }; \
	fi
	@missing=; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${db:Status-Abbrev}' "$$p" 2>/dev/null | grep -q '^ii' || \
			missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		{ apt-get update -q && apt-get install -y -q --no-install-recommends $$missing; } \
			>/tmp/frlock-deps.log 2>&1 || \
			{ echo "deps: apt-get install failed for:$$missing (log: /tmp/frlock-deps.log)" >&2; exit 1; }; \
		for svc in $(DEB_SERVICES); do \
			case " $$missing " in *" $$svc "*) ;; *) continue ;; esac; \
			[ -d /run/systemd/system ] || continue; \
			systemctl disable --now -q "$$svc.service" && \
				echo "deps: stopped and disabled $$svc.service, which Debian starts on all addresses; the project starts its own where it needs one, on loopback"; \
		done; \
	fi
	@if ! ls $(I386_DEBS)/busybox-static_*_i386.deb >/dev/null 2>&1; then \
		echo "deps: downloading busybox-static:i386 into $(I386_DEBS) (the i386 guest's busybox)"; \
		mkdir -p $(I386_DEBS) && cd $(I386_DEBS) && \
		apt-get download -q busybox-static:i386 >>/tmp/frlock-deps.log 2>&1 || \
			{ echo "deps: apt-get download busybox-static:i386 failed (log: /tmp/frlock-deps.log)" >&2; exit 1; }; \
	fi

kernel: deps
	kernel/build --variant frlock

kernel-seqcount: deps
	kernel/build --series seqcount

kernel-stock: deps
	kernel/build --variant stock

kernel-lockdep: deps
	kernel/build --variant lockdep

kernel-kcsan: deps
	kernel/build --variant kcsan

rootfs: deps
	host/mkrootfs

bpf: deps
	$(MAKE) -C bpf

# make run [DURATION=s] [THREADS=n] [VIA=syscall|vdso] [WRITERS=w/s] [INTERVAL=s]
#          [PROMETHEUS=1] [SELF_COST=1] [WALK=1] [CMD='COMMAND ARGS']: SELF_COST=1 also
#          shows frlockstat's own cost (frlockstat -S); WALK=1 the path walks that
#          fell back to ref-walk, per lock (frlockstat -W); CMD runs instead of gtod-load,
#          DURATION its cap (host/frlock-run -- COMMAND ARGS does the same);
# host/frlock-run checks the knobs first (exit 2), then installs, builds and
# boots; see host/README.md.
run:
	@args=(--duration '$(subst ','\'',$(DURATION))' --threads '$(subst ','\'',$(THREADS))' \
		--via '$(subst ','\'',$(VIA))' --writers '$(subst ','\'',$(WRITERS))' \
		--interval '$(subst ','\'',$(INTERVAL))' \
		--smp '$(subst ','\'',$(SMP))' --mem '$(subst ','\'',$(MEM))' \
		--accel '$(subst ','\'',$(ACCEL))' --prometheus '$(subst ','\'',$(PROMETHEUS))' \
		--self-cost '$(subst ','\'',$(SELF_COST))' --walk '$(subst ','\'',$(WALK))' \
		--cmd '$(subst ','\'',$(CMD))'); \
	host/frlock-run --check "$${args[@]}" && \
	$(MAKE) --no-print-directory deps && \
	host/frlock-run "$${args[@]}"

shell: deps
	@kernel=$$(kernel/build --variant frlock) && \
	host/run-guest --kernel "$$kernel" --smp $(SMP) --mem $(MEM) --accel $(ACCEL) --timeout 0

test: deps
	tests/run

test-host: deps
	tests/run --host-only

test-guest: deps
	tests/run --guest-only

# The README's commands from nothing: a minimal Debian 12 (mmdebstrap), an
# empty cache. About as long as a cold make test; not part of it.
test-fresh: deps
	tests/fresh-machine

# The checker kernels (built if missing) and TORTURE_S seconds of stress.
TORTURE_S ?= 300
test-long: deps
	tests/run --long '$(subst ','\'',$(TORTURE_S))'

# make bench [RUNS=n] [PAIRS=n] [SECS=s] [HOLDS=us,...] [WORKLOADS=gtod,paths]:
# bench/run checks its arguments itself. make bench EXACT=1 [BOOTS=n]: the
# exact mode instead, guest instructions under QEMU's -icount (bench/run
# --exact), every part booted BOOTS times (default 2).
EXACT ?= 0
BOOTS ?= 2
RUNS ?= 3
PAIRS ?= 10
SECS ?= 5
HOLDS ?= 1,10,100
WORKLOADS ?= gtod,paths
bench: deps
	@case '$(subst ','\'',$(EXACT))' in 0) ;; 1) ;; *) echo "make bench: EXACT wants 0 or 1, not '$(subst ','\'',$(EXACT))'" >&2; exit 2 ;; esac
	if [ '$(EXACT)' = 1 ]; then bench/run --exact --boots '$(subst ','\'',$(BOOTS))'; else \
	bench/run --runs '$(subst ','\'',$(RUNS))' --pairs '$(subst ','\'',$(PAIRS))' \
		--seconds '$(subst ','\'',$(SECS))' --holds '$(subst ','\'',$(HOLDS))' \
		--workloads '$(subst ','\'',$(WORKLOADS))'; fi

# make fixtures: record dashboards/fixtures/frlock-run.ndjson from a run of
# the current kernel and tools (gettimeofday load and a rename storm); a
# recording without both kinds of lock, waits, call sites and a lost event
# is not kept (host/frlock/fixtures.py).
fixtures: deps
	host/record-fixtures

# make lab NAME=<lab> [QUICK=1]: one teaching lab (labs/README.md); labs/lab
# checks NAME first (no lab, or an unknown one: the list, exit 2).
lab:
	@labs/lab --check '$(subst ','\'',$(NAME))' && \
	$(MAKE) --no-print-directory deps && \
	labs/lab $(if $(QUICK),--quick) '$(subst ','\'',$(NAME))'
