#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of the lines as data: the registry ./lines and its folders,
scripts/lib/lines.sh (the line of a run, its folders, the kernel versions it
takes), that no script names a line's folder but through it, and the
one-time move of a checkout made before the lines (scripts/tree/tree.sh)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts", "bench"))
import plan  # noqa: E402


def registry():
    """[(NAME, PACKAGE, ARCHIVES, SERIES, RESULTS, DESCRIPTION)] of ./lines."""
    with open(os.path.join(TOP, "lines")) as f:
        return [tuple(re.split(r"\t+", ln.rstrip("\n"))) for ln in f if ln.strip() and not ln.startswith("#")]


def bash(script, **env):
    """Run script after sourcing scripts/lib/lib.sh: (exit status, stdout, stderr)."""
    e = dict(os.environ, **env)
    for k in ("LINE", "BUILD", "LINUX", "BASE", "RESULTS", "KSRC"):
        if k not in env:
            e.pop(k, None)
    with tempfile.TemporaryDirectory() as d:
        e.setdefault("RESULTS", os.path.join(d, "r.jsonl"))
        open(e["RESULTS"], "a").close()
        out = subprocess.run(["bash", "-c", f'. "{TOP}/scripts/lib/lib.sh"; {script}'],
                             capture_output=True, text=True, env=e)
    return out.returncode, out.stdout.strip(), out.stderr.strip()


def fake_tree(path, version):
    """A directory whose Makefile says it is Linux VERSION."""
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "Makefile"), "w") as f:
        f.write(f"kernelversion:\n\t@echo {version}\n")


class Registry(unittest.TestCase):
    def test_lines_and_their_folders(self):
        lines = registry()
        self.assertGreaterEqual(len(lines), 2)
        for line in lines:
            self.assertEqual(len(line), 6, line)
            name, package, archives, series, results, _ = line
            self.assertEqual(package, f"linux-source-{name}")
            for a in archives.split(", "):
                self.assertRegex(a, r"^http://deb\.debian\.org/\S+ [a-z0-9-]+$")
            self.assertEqual((series, results), (f"patches/{name}", f"results/{name}"))
            self.assertTrue(os.path.isfile(os.path.join(TOP, series, "series")), series)
            self.assertTrue(os.path.isdir(os.path.join(TOP, "configs", name)), name)
            # Its registry of kernels: readable by the bench plan, and every
            # bench-only patch it names is in the line's folder.
            for k in plan.read_registry(os.path.join(TOP, series, "kernels")):
                for p in k.patches.split(","):
                    if not p.startswith("series"):
                        self.assertTrue(os.path.isfile(os.path.join(TOP, series, "bench-only", p)), (name, p))
        # Nothing of a line is left at the top, where a script could still read it.
        for gone in ("kernels", "patches/series", "patches/bench-only", "results/bench.md"):
            self.assertFalse(os.path.exists(os.path.join(TOP, gone)), gone)


class Lib(unittest.TestCase):
    def test_each_line_and_its_folders(self):
        for name, _, _, series, results, _ in registry():
            rc, out, err = bash('echo "$LINE $PATCHES $KERNELS_FILE $RESULTS_DIR $MUTANTS_DIR $BUILD $LINUX"; '
                                'config_frags guest.config | tr "\\n" " "', LINE=name)
            self.assertEqual(rc, 0, err)
            b = f"{TOP}/build/{name}"
            self.assertEqual(out, f"{name} {TOP}/{series} {TOP}/{series}/kernels {TOP}/{results} "
                                  f"{TOP}/mutants/{name} {b} {b}/linux\n{TOP}/configs/guest.config "
                                  f"{TOP}/configs/{name}/guest.config")

    def test_default_line_is_the_first(self):
        rc, out, _ = bash('echo "$LINE $DEFAULT_LINE"')
        first = registry()[0][0]
        self.assertEqual((rc, out), (0, f"{first} {first}"))

    def test_unknown_line(self):
        rc, _, err = bash("true", LINE="bogus")
        self.assertEqual(rc, 2)
        self.assertIn("unknown line 'bogus' (the lines of lines: " + " ".join(n[0] for n in registry()) + ")", err)

    def test_kernel_version_of_the_line_only(self):
        lines = [n[0] for n in registry()]
        with tempfile.TemporaryDirectory() as d:
            for i, name in enumerate(lines):
                fake_tree(os.path.join(d, name), f"{name}.7")
            for name in lines:
                rc, out, err = bash(f'kernel_version "{d}/{name}"', LINE=name)
                self.assertEqual((rc, out), (0, f"{name}.7"), err)
                other = next(n for n in lines if n != name)
                rc, out, err = bash(f'kernel_version "{d}/{other}"', LINE=name)
                self.assertEqual(rc, 2)
                self.assertIn(f"a tree of the {other} line; this is the {name} line", err)
            fake_tree(os.path.join(d, "x"), "2.6.32")
            rc, _, err = bash(f'kernel_version "{d}/x"', LINE=lines[0])
            self.assertEqual(rc, 2)
            self.assertIn("no line of ./lines takes 2.6.32", err)

    def test_no_script_names_a_line_folder(self):
        """The line's folders come from scripts/lib/lines.sh only: a script
        that reads patches/, kernels, mutants/ or results/ at the top reads
        no line's."""
        bad = re.compile(r'(\$TOP|\$\{TOP\}|"\$TOP")/(patches|mutants|results|kernels)\b'
                         r'|TOP, "(patches|mutants|results|kernels)"(?!, "6\.12")')
        found = []
        for root, _, files in os.walk(os.path.join(TOP, "scripts")):
            for f in files:
                p = os.path.join(root, f)
                if p.endswith((".pyc", ".tap", ".json", ".txt")) or "testdata" in p or f == "test_lines.py":
                    continue
                with open(p, errors="replace") as fh:
                    for n, text in enumerate(fh, 1):
                        if bad.search(text) and not p.endswith("scripts/lib/lines.sh"):
                            found.append(f"{os.path.relpath(p, TOP)}:{n}: {text.strip()}")
        self.assertEqual(found, [])


class Migration(unittest.TestCase):
    """build/linux of 6.12 (a checkout made before the lines), with
    worktrees, moves into build/6.12/ once, and git knows its worktrees
    there."""

    def git(self, *args, cwd):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                       capture_output=True)

    def test_move_and_repair(self):
        line = next(n[0] for n in registry() if n[0] == "6.12")
        with tempfile.TemporaryDirectory() as d:
            root = os.path.join(d, "build")
            linux = os.path.join(root, "linux")
            fake_tree(linux, f"{line}.5")
            self.git("init", "-q", "-b", "master", cwd=linux)
            self.git("add", "-A", cwd=linux)
            self.git("commit", "-q", "-m", f"Linux {line}.5 (base of the lazy-rss series)", cwd=linux)
            self.git("tag", "lazy-rss-base", cwd=linux)
            self.git("branch", "lazy-rss", cwd=linux)
            self.git("checkout", "-q", "lazy-rss", cwd=linux)
            for wt in ("base", "bench-base", "check-apply"):
                self.git("worktree", "add", "-q", "--detach", os.path.join(root, wt), "lazy-rss-base", cwd=linux)
            for other in ("logs", "vm", "qemu-plugin", "apt"):
                os.makedirs(os.path.join(root, other))
            open(os.path.join(root, "logs", "old.log"), "w").close()
            open(os.path.join(root, "mutate.stamp"), "w").close()
            env = dict(os.environ, BUILD_ROOT=root, LINE=line)
            env.pop("BUILD", None)
            out = subprocess.run([os.path.join(TOP, "scripts", "tree", "tree.sh")], env=env,
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertIn(f"moving build/'s trees and builds of Linux {line}.5 into", out.stdout)
            self.assertEqual(sorted(os.listdir(root)), sorted([line, "qemu-plugin", "apt"]))
            new = os.path.join(root, line)
            for e in ("linux", "base", "bench-base", "check-apply", "vm", "mutate.stamp", "logs/old.log",
                      "base-version"):
                self.assertTrue(os.path.exists(os.path.join(new, e)), e)
            wts = subprocess.run(["git", "-C", os.path.join(new, "linux"), "worktree", "list", "--porcelain"],
                                 capture_output=True, text=True, check=True).stdout
            paths = sorted(ln.split(" ", 1)[1] for ln in wts.splitlines() if ln.startswith("worktree "))
            self.assertEqual(paths, sorted(os.path.join(new, w) for w in ("linux", "base", "bench-base", "check-apply")))
            self.assertNotIn("prunable", wts)
            st = subprocess.run(["git", "-C", os.path.join(new, "base"), "status", "--porcelain"],
                                capture_output=True, text=True)
            self.assertEqual(st.returncode, 0, st.stderr)
            with open(os.path.join(new, "base-version")) as f:
                self.assertEqual(f.readline(), f"kernel {line}.5\n")
            # Once: a second run moves nothing.
            out = subprocess.run([os.path.join(TOP, "scripts", "tree", "tree.sh")], env=env,
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertNotIn("moving", out.stdout)


if __name__ == "__main__":
    unittest.main()
