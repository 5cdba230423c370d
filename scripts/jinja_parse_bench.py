#!/usr/bin/env python3
"""Time the per-request Jinja work of vLLM's chat endpoint, by release (docs/cost-model.md "The chat endpoint's render
barrier"; perf/chat_render.hpp). Both are CPU work on the API server's one event loop, done for every
/v1/chat/completions request in the releases that do not cache them:

  detect   0.8.0-0.9.1: the content-format detection of vllm#9919 (`_detect_content_format`): the template is parsed
           with the (cached) compiled template's environment and its AST searched for a loop over a message's
           `content` (names bound to `messages` and to its items followed through `{% set %}`, then `{% for %}` loops
           over them). vllm#20065 measured it at 6-8 s per 1,000 requests (Llama-3.1-8B-Instruct's template).
  kwargs   0.11.x: the template-kwargs filter of vllm#25794 (`_resolve_chat_template_kwargs`): a new sandboxed
           environment, `env.parse` and `jinja2.meta.find_undeclared_variables`, which runs Jinja's code generator's
           identifier tracking over the whole template.

The ratio kwargs / detect on the same template carries vllm#20065's measured cost from 0.9 to 0.11 on the same host:
    scripts/jinja_parse_bench.py TEMPLATE.jinja [TEMPLATE.jinja ...]
A template is a model's `chat_template` (tokenizer_config.json, or chat_template.jinja). CPU time (time.process_time),
best of 5 repeats, so a loaded host inflates it less than wall time.
"""
import argparse
import time
from collections import deque

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
import jinja2.sandbox


def new_env():
    # transformers' chat-template environment and vllm#25794's: trim_blocks, lstrip_blocks, loopcontrols.
    return jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                        extensions=[jinja2.ext.loopcontrols])


CACHED_ENV = new_env()  # the compiled template's environment, cached by transformers (_compile_jinja_template)


def kwargs_0_11(source):
    return jinja2.meta.find_undeclared_variables(new_env().parse(source))


def _loads(node, name, key=None):
    """Whether `node` reads `name` (or `name.key` / `name[key]`), through filters, tests and slices."""
    if isinstance(node, (jinja2.nodes.Filter, jinja2.nodes.Test)):
        return node.node is not None and _loads(node.node, name, key)
    if isinstance(node, jinja2.nodes.Getitem) and isinstance(node.arg, jinja2.nodes.Slice):
        return _loads(node.node, name, key)
    if key is None:
        return isinstance(node, jinja2.nodes.Name) and node.ctx == "load" and node.name == name
    if isinstance(node, jinja2.nodes.Getattr):
        return node.attr == key and _loads(node.node, name)
    if isinstance(node, jinja2.nodes.Getitem):
        return isinstance(node.arg, jinja2.nodes.Const) and node.arg.value == key and _loads(node.node, name)
    return False


def _aliases(root, name):
    names, queue = [name], deque([name])
    while queue:
        current = queue.popleft()
        for assign in root.find_all(jinja2.nodes.Assign):
            if isinstance(assign.target, jinja2.nodes.Name) and _loads(assign.node, current):
                names.append(assign.target.name)
                if assign.target.name != current:
                    queue.append(assign.target.name)
    return names


def _loop_targets(root, sources, key=None):
    out = []
    for loop in root.find_all(jinja2.nodes.For):
        if isinstance(loop.target, jinja2.nodes.Name) and any(_loads(loop.iter, s, key) for s in sources):
            out.append(loop.target.name)
    return out


def detect_0_9(source):
    ast = CACHED_ENV.parse(source)
    return "openai" if _loop_targets(ast, _loop_targets(ast, _aliases(ast, "messages")), "content") else "string"


def cpu_ms(fn, source, n=30):
    for _ in range(3):
        fn(source)
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(n):
            fn(source)
        best = min(best, (time.process_time() - start) / n * 1e3)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("templates", nargs="+")
    args = ap.parse_args()
    print(f"jinja2 {jinja2.__version__}")
    for path in args.templates:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        d, k = cpu_ms(detect_0_9, source), cpu_ms(kwargs_0_11, source)
        print(f"{path}: {len(source)} chars, detect (0.8-0.9.1) {d:.2f} ms, kwargs (0.11) {k:.2f} ms, "
              f"kwargs / detect {k / d:.2f} (content format: {detect_0_9(source)})")


if __name__ == "__main__":
    main()
