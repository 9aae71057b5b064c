// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insnprof: a QEMU TCG plugin that counts the guest's executed
 * instructions per translation block between marks, as -icount counts
 * them: each iteration of a rep-prefixed string instruction is one (TCG
 * runs each iteration as one execution of a block of that instruction),
 * so that the counts add up to the guest time that -icount charges.
 *
 * A guest that executes xchg %bx,%bx (66 87 db, a no-op: the mark of
 * tools/bench/mark.c and forkbench -m) toggles counting: an odd mark
 * clears the counts and starts, an even one stops and prints one line per
 * block that ran, "insnprof RUN VADDR OWN OTHERS", where OWN counts the
 * vCPU that executed the mark that started the run and OTHERS all other
 * vCPUs, then "insnprof RUN end". tools/bench/insn_profile.py maps the
 * addresses to kernel symbols. Built by scripts/qemu-plugin.sh.
 */
#include <inttypes.h>
#include <stdio.h>
#include <glib.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t vaddr;
	unsigned int insns;
	uint64_t count[2];	/* the marking vCPU's, the others' */
};

/*
 * With -icount, TCG runs all vCPUs in one thread, one at a time: the
 * callbacks never run concurrently, and need no lock.
 */
static GHashTable *blocks;	/* by vaddr and length: a block can be retranslated */
static GMutex lock;		/* for translation without -icount */
static bool counting;
static unsigned int marker, runs;

static void block_exec(unsigned int vcpu, void *userdata)
{
	struct block *b = userdata;

	if (counting)
		b->count[vcpu != marker] += b->insns;
}

static void block_clear(gpointer key, gpointer value, gpointer data)
{
	struct block *b = value;

	b->count[0] = b->count[1] = 0;
}

static void block_print(gpointer key, gpointer value, gpointer data)
{
	struct block *b = value;

	if (b->count[0] || b->count[1])
		g_string_append_printf(data, "insnprof %u %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				       runs, b->vaddr, b->count[0], b->count[1]);
}

static void mark(unsigned int vcpu, void *userdata)
{
	g_autoptr(GString) out = g_string_new(NULL);

	if (!counting) {
		g_hash_table_foreach(blocks, block_clear, NULL);
		marker = vcpu;
		runs++;
		counting = true;
		return;
	}
	counting = false;
	g_hash_table_foreach(blocks, block_print, out);
	g_string_append_printf(out, "insnprof %u end\n", runs);
	qemu_plugin_outs(out->str);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct {
		uint64_t vaddr, insns;
	} key = { vaddr, n };
	struct block *b;

	g_mutex_lock(&lock);
	b = g_hash_table_lookup(blocks, &key);
	if (!b) {
		b = g_new0(struct block, 1);
		b->vaddr = vaddr;
		b->insns = n;
		g_hash_table_insert(blocks, g_memdup2(&key, sizeof(key)), b);
	}
	g_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *d = qemu_plugin_insn_data(insn);

		if (qemu_plugin_insn_size(insn) == 3 &&
		    d[0] == 0x66 && d[1] == 0x87 && d[2] == 0xdb)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static guint key_hash(gconstpointer p)
{
	const uint64_t *k = p;

	return g_int64_hash(&k[0]) ^ (guint)k[1];
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	const uint64_t *x = a, *y = b;

	return x[0] == y[0] && x[1] == y[1];
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	blocks = g_hash_table_new(key_hash, key_equal);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
