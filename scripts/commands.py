#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""List the external commands that bash scripts call, for make check's
dependency test (scripts/deps-test.sh).

usage: commands.py SCRIPT...
Prints "SCRIPT GROUPS COMMAND" lines: GROUPS are the scripts/deps.sh groups
the script installs (need_deps GROUP...) or names ("scripts/deps.sh GROUP"),
comma-separated, or "-" when it names none. COMMAND is every word in command
position (or a host file it uses by its path, /usr/bin/X): at the start of a simple command, after a pipe or a list operator,
inside $(...) and <(...), the first word of an array run as "${name[@]}",
after the wrappers nice, timeout, sudo, env, exec,
xargs and command -v. Heredoc bodies (text for other programs or guests),
comments, quoted arguments, function names and variables are left out; the
caller drops builtins and keywords.
"""
import re
import shlex
import sys

WRAPPERS = {'nice', 'timeout', 'sudo', 'env', 'exec', 'xargs', 'command', 'time'}
KEYWORDS = {'if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until',
            'for', 'case', 'esac', 'in', 'function', 'select', '!', '{', '}'}
GROUPS = re.compile(r'(?:need_deps|scripts/deps\.sh)((?: +[a-z]+)+)')


def balanced(line):
    try:
        shlex.split(line, comments=True)
        return True
    except ValueError:
        return False


def logical_lines(text):
    """Lines with continuations joined and heredoc bodies dropped."""
    lines, out, heredoc = text.split('\n'), [], None
    buf = ''
    for line in lines:
        if heredoc:
            if line.strip() == heredoc:
                heredoc = None
            continue
        if line.endswith('\\'):
            buf += line[:-1] + ' '
            continue
        line = buf + line
        buf = ''
        if re.search(r'\w=\([^)]*$', line) or not balanced(line):
            buf = line + '\n'	# an array or a quoted string that goes on
            continue
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        if m and not re.search(r'<<<', line[:m.end()]):
            heredoc = m.group(1)
        out.append(line)
    return out


def unquote_single(line):
    """Single-quoted strings (awk, sed programs) become '' ."""
    out, i, dq = [], 0, False
    while i < len(line):
        c = line[i]
        if c == '\\':
            out.append(line[i:i + 2])
            i += 2
            continue
        if c == '"':
            dq = not dq
        elif c == "'" and not dq:
            j = line.find("'", i + 1)
            if j < 0:
                j = len(line)
            out.append("''")
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def substitutions(line, found):
    """Replace $(...), <(...), `...` by a word; their text goes to found."""
    line = unquote_single(line)
    line = re.sub(r'\$\{(\w+)\[@\]\}', r'$ARR_\1', line)	# "${cmd[@]}"
    while re.search(r'\$\{[^{}]*\}', line):	# ${...}, innermost first
        line = re.sub(r'\$\{[^{}]*\}', '$V', line)
    while '$((' in line:		# arithmetic, with its nested parentheses
        i = line.index('$((')
        depth, j = 0, i + 1
        while j < len(line):
            depth += {'(': 1, ')': -1}.get(line[j], 0)
            j += 1
            if depth == 0:
                break
        line = line[:i] + '0' + line[j:]
    while True:
        m = re.search(r'(?:\$|<|>)\(([^()]*)\)', line) or re.search(r'`([^`]*)`', line)
        if not m:
            return line
        found.append(m.group(1))
        line = line[:m.start()] + ' $SUBST ' + line[m.end():]


def commands(line, state):
    # An array whose first word is run later as "${name[@]}".
    for name, first in re.findall(r'\b(\w+)=\(\s*([\w.+-]+)', line):
        state.setdefault('arrays', {}).setdefault(name, first)
    line = re.sub(r'\b\w+\+?=\([^()]*\)', ' ', line)	# array assignment
    lex = shlex.shlex(line, posix=True, punctuation_chars=';&|(){}<>')
    lex.commenters = '#'
    lex.whitespace_split = True
    try:
        toks = list(lex)
    except ValueError:
        return []
    out, at_cmd, skip_next, wrapper = [], True, False, None
    for t in toks:
        if skip_next:
            skip_next = False
            continue
        # case WORD in PATTERN) LIST ;; PATTERN) LIST ;; esac
        if state.get('case') == 'word':
            state['case'] = 'in' if t == 'in' else 'word'
            if t == 'in':
                state['pattern'] = True
            continue
        if state.get('pattern'):
            if t == 'esac':
                state['pattern'] = False
                state['depth'] -= 1
            elif t == ')':
                state['pattern'] = False
                at_cmd = True
            continue
        if t == 'case':
            state['case'] = 'word'
            state['depth'] = state.get('depth', 0) + 1
            continue
        if t in (';;', ';&', ';;&') and state.get('depth', 0) > 0:
            state['pattern'] = True
            continue
        if t == 'esac':
            state['depth'] -= 1
            continue
        if t and set(t) <= set(';&|(){}<>'):
            if '<' in t or '>' in t:
                skip_next = not t.endswith('&')
            else:
                at_cmd = True
            continue
        if not at_cmd:
            continue
        if wrapper:
            if t.startswith('-'):
                if wrapper == 'nice' and t == '-n' or wrapper == 'timeout' and t in ('-k', '-s'):
                    skip_next = True
                continue
            if wrapper == 'timeout' and re.fullmatch(r'[0-9.]+[smhd]?|\$\w+|\$\{\w+\}', t):
                wrapper = None
                continue
            if wrapper == 'env' and '=' in t:
                continue
            wrapper = None
        if t in ('for', 'select'):	# then a name, not a command
            at_cmd = False
            continue
        if re.fullmatch(r'\w+=.*', t) or t in KEYWORDS:
            continue
        at_cmd = False
        if t in WRAPPERS:
            wrapper, at_cmd = t, True
            continue
        m = re.fullmatch(r'"?\$ARR_(\w+)"?', t)
        if m:
            state.setdefault('run', set()).add(m.group(1))
            continue
        if t.isdigit() or '$' in t or '/' in t or not re.fullmatch(r'[\w.+\[-]+', t):
            continue
        out.append(t)
    return out


def main():
    funcs = set()
    for path in sys.argv[1:]:
        funcs |= set(re.findall(r'^\s*([\w-]+)\s*\(\)', open(path).read(), re.M))
    for path in sys.argv[1:]:
        text = open(path).read()
        groups = sorted({g for m in GROUPS.finditer(text) for g in m.group(1).split()
                         if g in ('build', 'vm', 'check', 'bench')})
        # Host files the script uses by path (scripts/vm --add /usr/bin/X).
        for f in sorted(set(re.findall(r'(?<![\w$}./-])/(?:usr/)?(?:s?bin|src)/[\w.+-]+', text))):
            print(path, ','.join(groups) or '-', f)
        todo, seen, state = logical_lines(text), set(), {}
        while todo:
            found = []
            line = substitutions(todo.pop(0), found)
            for f in found:
                for c in commands(f, {}):
                    if c not in funcs and c not in seen:
                        seen.add(c)
                        print(path, ','.join(groups) or '-', c)
            for c in commands(line, state):
                if c not in funcs and c not in seen:
                    seen.add(c)
                    print(path, ','.join(groups) or '-', c)
        for name in sorted(state.get('run', ())):
            c = state.get('arrays', {}).get(name)
            if c and c not in funcs and c not in seen:
                seen.add(c)
                print(path, ','.join(groups) or '-', c)


main()
