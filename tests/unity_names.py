#!/usr/bin/env python3
"""Each test folder compiles as one unity file (tests/CMakeLists.txt, LLMSIM_UNITY_BATCH 32), so a helper that two
files of a folder both define at file scope is either a redefinition (a compile error) or, worse, an overload: a call
meant for one file's `error_of(std::string)` silently binds to another's `error_of(const char*)` (it happened: issue
30, the one-file test units). This check fails on any file-scope function, type or constant name defined in more than
one .cpp of a test folder, naming the folder, the name and the files.

usage: unity_names.py SOURCE_DIR"""
import collections
import glob
import os
import re
import sys

FUNCTION = re.compile(r'^(?:static\s+|inline\s+|constexpr\s+|\[\[nodiscard\]\]\s+)*(?:[\w:<>,]+[\s*&]+)+?(\w+)\s*\((?!.*\);\s*$)')
TYPE = re.compile(r'^(?:struct|class|enum(?:\s+class)?)\s+(\w+)\s*(?:[:{]|$)|^using\s+(\w+)\s*=')
CONSTANT = re.compile(r'^(?:static\s+)?(?:inline\s+)?(?:constexpr|const)\s+[\w:<>]+\s+(\w+)\s*[={]')
NOT_NAMES = {'TEST_CASE', 'SECTION', 'TEMPLATE_TEST_CASE', 'SCENARIO', 'main', 'if', 'for', 'while', 'return',
             'switch', 'namespace'}


def names_of(path):
    found = set()
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            if line.startswith(('#', '//', 'TEST_CASE', 'SCENARIO', 'using namespace')):
                continue
            for rx in (FUNCTION, TYPE, CONSTANT):
                m = rx.match(line)
                name = m and next((g for g in m.groups() if g), None)
                if name and name not in NOT_NAMES:
                    found.add(name)
    return found


def main():
    if len(sys.argv) != 2 or not os.path.isdir(os.path.join(sys.argv[1], 'tests')):
        sys.exit('usage: unity_names.py SOURCE_DIR (the folder holding tests/)')
    clashes = []
    folders = sorted(d for d in glob.glob(os.path.join(sys.argv[1], 'tests', '*')) if os.path.isdir(d))
    for folder in folders:
        where = collections.defaultdict(list)
        for path in sorted(glob.glob(os.path.join(folder, '*.cpp'))):
            for name in names_of(path):
                where[name].append(os.path.basename(path))
        for name, files in sorted(where.items()):
            if len(files) > 1:
                clashes.append(f'tests/{os.path.basename(folder)}: `{name}` is defined at file scope in '
                               f'{", ".join(files)}; the folder compiles as one unity file: give each a file-specific '
                               f'name or move one shared copy into the folder\'s header')
    for c in clashes:
        print(c)
    print(f'{len(folders)} test folders checked, {len(clashes)} clashing names')
    sys.exit(1 if clashes else 0)


if __name__ == '__main__':
    main()
