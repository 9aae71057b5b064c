// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insnprof: a QEMU TCG plugin that counts the guest's executed
 * instructions per instruction address between marks, the way -icount
 * charges guest time: each iteration of a rep-prefixed string instruction
 * is one (TCG runs each iteration as one execution of the instruction),
 * an instruction that is re-run on its own for memory-mapped I/O is
 * counted once, and only an instruction that raises an exception (a page
 * fault) is counted once more than -icount does, when it runs again.
 *
 * A guest that executes xchg %bx,%bx (66 87 db, a no-op: the mark of
 * scripts/bench/mark.c and forkbench -m) toggles counting: an odd mark
 * clears the counts and starts, an even one stops and prints one line per
 * instruction that ran, "insnprof RUN VADDR OWN OTHERS", where OWN counts
 * the vCPU that executed the mark that started the run and OTHERS all
 * other vCPUs, then "insnprof RUN end". scripts/bench/insn_profile.py maps
 * the addresses to kernel symbols. Built by scripts/bench/qemu-plugin.sh.
 */
#include <inttypes.h>
#include <stdio.h>
#include <glib.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct insn {
	uint64_t vaddr;
	uint64_t count[2];	/* the marking vCPU's, the others' */
};

/*
 * Under -icount, TCG runs all vCPUs in one thread, one at a time; the
 * counts are added atomically all the same, so that a run without it
 * (parallel TCG) does not lose any.
 */
static GHashTable *insns;	/* by guest virtual address */
static GMutex lock;		/* the table, while translating */
static bool counting;
static unsigned int marker, runs;

static void insn_exec(unsigned int vcpu, void *userdata)
{
	struct insn *in = userdata;

	if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
		__atomic_fetch_add(&in->count[vcpu != marker], 1, __ATOMIC_RELAXED);
}

static void insn_clear(gpointer key, gpointer value, gpointer data)
{
	struct insn *in = value;

	in->count[0] = in->count[1] = 0;
}

static void insn_print(gpointer key, gpointer value, gpointer data)
{
	struct insn *in = value;

	if (in->count[0] || in->count[1])
		g_string_append_printf(data, "insnprof %u %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				       runs, in->vaddr, in->count[0], in->count[1]);
}

static void mark(unsigned int vcpu, void *userdata)
{
	g_autoptr(GString) out = g_string_new(NULL);

	g_mutex_lock(&lock);
	if (!counting) {
		g_hash_table_foreach(insns, insn_clear, NULL);
		marker = vcpu;
		runs++;
		__atomic_store_n(&counting, true, __ATOMIC_RELAXED);
		g_mutex_unlock(&lock);
		return;
	}
	__atomic_store_n(&counting, false, __ATOMIC_RELAXED);
	g_hash_table_foreach(insns, insn_print, out);
	g_mutex_unlock(&lock);
	g_string_append_printf(out, "insnprof %u end\n", runs);
	qemu_plugin_outs(out->str);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *d = qemu_plugin_insn_data(insn);
		uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
		struct insn *in;

		g_mutex_lock(&lock);
		in = g_hash_table_lookup(insns, &vaddr);
		if (!in) {
			in = g_new0(struct insn, 1);
			in->vaddr = vaddr;
			g_hash_table_insert(insns, &in->vaddr, in);
		}
		g_mutex_unlock(&lock);
		qemu_plugin_register_vcpu_insn_exec_cb(insn, insn_exec, QEMU_PLUGIN_CB_NO_REGS, in);
		if (qemu_plugin_insn_size(insn) == 3 &&
		    d[0] == 0x66 && d[1] == 0x87 && d[2] == 0xdb)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	insns = g_hash_table_new(g_int64_hash, g_int64_equal);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
