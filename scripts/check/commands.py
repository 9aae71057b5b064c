#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""List the external commands that bash scripts call, for make check's
dependency test (scripts/check/deps-test.sh), from the syntax tree that shfmt
(Debian's shfmt, -tojson) parses them into.

usage: commands.py SCRIPT...
Prints "SCRIPT GROUPS COMMAND" lines: GROUPS are the scripts/setup/deps.sh groups
the script installs (need_deps GROUP...) or names ("scripts/setup/deps.sh GROUP"),
comma-separated, or "-" when it names none. COMMAND is the first word of
every simple command, wherever it stands (pipelines, lists, $(...), <(...),
the expansions of a heredoc), after the wrappers below, or the first word
of an array the script runs as "${name[@]}"; and every host file that the
script names by its path (/usr/bin/X, /bin/X, /usr/src/X). Words that are
not plain literals (variables, paths) and the script's own functions are
left out; the caller drops builtins and keywords.
"""
import json
import re
import subprocess
import sys

WRAPPERS = {"nice", "timeout", "sudo", "env", "exec", "xargs", "command", "time"}
GROUPS = re.compile(r"(?:need_deps|scripts/setup/deps\.sh)((?: +[a-z]+)+)")
HOST_FILE = re.compile(r"(?<![\w$}./-])/(?:usr/)?(?:s?bin|src)/[\w.+-]+")


def literal(word):
    """The text of a word made of literal parts only, else None."""
    parts = word.get("Parts", [])
    if parts and all(p.get("Type") in ("Lit", "SglQuoted") for p in parts):
        return "".join(p["Value"] for p in parts)
    return None


def array_run(word):
    """NAME when the word is "${NAME[@]}", else None."""
    parts = word.get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "DblQuoted":
        parts = parts[0].get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "ParamExp" and "Index" in parts[0]:
        return parts[0]["Param"]["Value"]
    return None


def command(args):
    """The command a CallExpr runs, past its wrappers and their options."""
    i = 0
    while i < len(args):
        word = literal(args[i])
        if word not in WRAPPERS:
            return word, args[i]
        i += 1
        while i < len(args) and (literal(args[i]) or "").startswith("-"):
            i += 1 + (literal(args[i]) in ("-n", "-k", "-s", "-u"))	# nice -n N, timeout -k N, env -u NAME
        if word == "timeout" and i < len(args):
            i += 1						# the duration
        while word == "env" and i < len(args) and "=" in (literal(args[i]) or ""):
            i += 1
    return None, None


def walk(node, found, arrays, runs, funcs):
    if isinstance(node, list):
        for n in node:
            walk(n, found, arrays, runs, funcs)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("Type")
    if kind == "FuncDecl":
        funcs.add(node["Name"]["Value"])
    if node.get("Array") and node.get("Name"):		# NAME=(WORD ...), local NAME=(...)
        items = node["Array"].get("Elems") or []
        if items and literal(items[0]["Value"]):
            arrays.setdefault(node["Name"]["Value"], literal(items[0]["Value"]))
    if kind == "CallExpr" and node.get("Args"):
        name, word = command(node["Args"])
        if name:
            found.append(name)
        elif word is not None and array_run(word):
            runs.append(array_run(word))
    for key, value in node.items():
        if key not in ("Pos", "End"):
            walk(value, found, arrays, runs, funcs)


def main():
    scripts, funcs = {}, set()	# the functions of every script (lib.sh's too)
    for path in sys.argv[1:]:
        text = open(path).read()
        tree = json.loads(subprocess.run(["shfmt", "-ln", "bash", "-tojson"], input=text,
                                         capture_output=True, text=True, check=True).stdout)
        found, arrays, runs = [], {}, []
        walk(tree, found, arrays, runs, funcs)
        scripts[path] = (text, found + [arrays[r] for r in runs if r in arrays])
    for path, (text, found) in scripts.items():
        groups = sorted({g for m in GROUPS.finditer(text) for g in m.group(1).split()
                         if g in ("build", "vm", "check", "bench")})
        cmds = sorted(set(HOST_FILE.findall(text)))
        cmds += [c for c in found if c not in funcs and re.fullmatch(r"[\w.+\[-]+", c)]
        for c in dict.fromkeys(cmds):
            print(path, ",".join(groups) or "-", c)


main()
