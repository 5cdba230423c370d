# Microbenchmark: the host work of vLLM V0's per-step block tables (issue 27, branch a100bias47; sizing only, no
# constant of llmsim is set from it). V0 rebuilds every running sequence's block table from Python lists each step
# (vllm/attention/backends/utils.py, CommonMetadataBuilder, 0.6-0.10, paraphrased, not copied):
#   add_seq_group: each sequence's table is a slice of the scheduler's list (block_tables[seq_id][-w:], a copy);
#   build, graphed decode: a Python loop writes each list into runner.graph_block_tables[:batch] (a numpy int32 array
#     of max_seq_len_to_capture / block_size = 8192 / 16 = 512 columns), then one host-to-device copy;
#   build, eager steps (prefills, mixed chunked steps): make_tensor_with_pad -> np.full((B, max_blocks)) + the same
#     per-row assignments.
# So the step's host time grows with the batch B and its blocks sum(ceil(context / 16)). This times the two numpy
# paths (torch's copy of the 0.5 MB array is not timed) for B sequences of n blocks each.
import sys, time
import numpy as np

def graphed(tables, graph):
    inp = graph[:len(tables)]
    for i, bt in enumerate(tables):
        bt = bt[-0:]  # the builder's slice copy
        if bt:
            inp[i, :len(bt)] = bt

def eager(tables):
    m = max(len(t) for t in tables)
    out = np.full((len(tables), m), 0, dtype=np.int32)
    for i, bt in enumerate(tables):
        bt = bt[-0:]
        out[i, :len(bt)] = bt

def best(f, *a, reps=30):
    t = 1e9
    for _ in range(reps):
        s = time.perf_counter(); f(*a); t = min(t, time.perf_counter() - s)
    return t

graph = np.zeros((256, 512), dtype=np.int32)
print("B\tblocks/seq\tgraphed_ms\teager_ms\tns_per_block(graphed)")
rows = []
for b in (16, 64, 160, 256):
    for n in (8, 16, 64, 128, 256):
        tables = [list(range(i * n, (i + 1) * n)) for i in range(b)]
        g, e = best(graphed, tables, graph), best(eager, tables)
        rows.append((b, n, g))
        print(f"{b}\t{n}\t{g*1e3:.3f}\t{e*1e3:.3f}\t{g/(b*n)*1e9:.1f}")
# Least squares t = a*B + c*(B*n) over the graphed rows.
A = np.array([[b, b * n] for b, n, _ in rows], dtype=float)
y = np.array([g for _, _, g in rows])
(a, c), *_ = np.linalg.lstsq(A, y, rcond=None)
print(f"fit: {a*1e6:.2f} us per sequence + {c*1e9:.1f} ns per block  (python {sys.version.split()[0]}, numpy {np.__version__})")
