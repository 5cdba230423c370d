"""The README's quick command lines run as printed (issue 29's guide audit: `llmsim step ... --decode-seqs 32
--context 2048` on a 24 GB 4090 asked for more KV than the card holds and exited 2).

Only the commands that need no input file and run in milliseconds (catalog, memory, step) are replayed here; the
scenario commands are exercised by test_cli and the notebooks."""
import os
import re
import shlex
import subprocess

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
QUICK = ("catalog", "memory", "step")


def readme_commands():
    text = open(README, encoding="utf-8").read()
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():  # continuation lines joined
            line = line.split("   #")[0].strip()  # a trailing comment after three spaces
            words = shlex.split(line) if line.startswith("llmsim ") else []
            if len(words) > 1 and words[1] in QUICK:
                if words[1] == "catalog":  # `catalog gpus|models|quants`: each of them
                    commands += [["llmsim", "catalog", w] for w in words[2].split("|")]
                else:
                    commands.append(words)
    return commands


def test_readme_has_quick_commands():
    kinds = {c[1] for c in readme_commands()}
    assert kinds == set(QUICK), kinds


@pytest.mark.parametrize("words", readme_commands(), ids=lambda w: " ".join(w[1:]))
def test_readme_command_runs(cli, words):
    r = subprocess.run([cli] + words[1:], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()
