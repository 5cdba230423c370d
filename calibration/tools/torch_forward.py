#!/usr/bin/env python3
"""Times real forward passes of a Llama-shaped model with random weights (bf16) on the GPU, for comparison
with `llmsim step`. Prefill: one prompt of L tokens (eager, SDPA flash attention). Decode: B
sequences of context C generating one token (captured in a CUDA graph, as serving engines run decode).
Prints one JSON line per point: {"kind", "batch", "tokens" or "context", "time_ms_median"}.

usage: python3 torch_forward.py data/models/llama-3.1-8b.json [--quick]
"""
import json
import sys

import torch
import torch.nn.functional as F


def main():
    cfg = json.load(open(sys.argv[1]))
    quick = "--quick" in sys.argv
    h, nl, nh = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]
    kvh = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim", h // nh)
    ffn, vocab = cfg["intermediate_size"], cfg["vocab_size"]
    dev, dt = "cuda", torch.bfloat16
    torch.manual_seed(0)
    w = lambda *s: (torch.randn(*s, device=dev, dtype=dt) * 0.02)
    layers = [dict(qkv=w((nh + 2 * kvh) * hd, h), o=w(h, nh * hd), gu=w(2 * ffn, h), d=w(h, ffn),
                   n1=torch.ones(h, device=dev, dtype=dt), n2=torch.ones(h, device=dev, dtype=dt)) for _ in range(nl)]
    emb, head = w(vocab, h), w(vocab, h)

    def rms(x, g):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * g

    def forward(ids, kcache, vcache, pos):
        # ids: [B, T]; caches: per layer [B, kvh, Cmax, hd]; pos: tokens already cached (int)
        b, t = ids.shape
        x = emb[ids]
        for i, L in enumerate(layers):
            y = rms(x, L["n1"]) @ L["qkv"].t()
            q, k, v = y.split([nh * hd, kvh * hd, kvh * hd], dim=-1)
            q = q.view(b, t, nh, hd).transpose(1, 2)
            k = k.view(b, t, kvh, hd).transpose(1, 2)
            v = v.view(b, t, kvh, hd).transpose(1, 2)
            kcache[i][:, :, pos:pos + t] = k
            vcache[i][:, :, pos:pos + t] = v
            kk, vv = kcache[i][:, :, :pos + t], vcache[i][:, :, :pos + t]
            a = F.scaled_dot_product_attention(q, kk, vv, is_causal=(t > 1), enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(b, t, nh * hd) @ L["o"].t()
            g, u = (rms(x, L["n2"]) @ L["gu"].t()).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ L["d"].t()
        return rms(x[:, -1], layers[-1]["n2"]) @ head.t()  # LM head on the last token

    def timed(fn, reps=10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(3):
            fn()
        ts = []
        for _ in range(reps):
            s.record(); fn(); e.record(); torch.cuda.synchronize()
            ts.append(s.elapsed_time(e))
        ts.sort()
        return ts[len(ts) // 2]

    with torch.inference_mode():
        for b, l in ([(1, 512), (1, 2048)] if quick else [(1, 128), (1, 512), (1, 2048), (1, 4096), (1, 8192)]):
            kc = [torch.zeros(b, kvh, l, hd, device=dev, dtype=dt) for _ in range(nl)]
            vc = [torch.zeros(b, kvh, l, hd, device=dev, dtype=dt) for _ in range(nl)]
            ids = torch.randint(0, vocab, (b, l), device=dev)
            ms = timed(lambda: forward(ids, kc, vc, 0))
            print(json.dumps({"kind": "prefill", "batch": b, "tokens": l, "time_ms_median": ms}), flush=True)
            del kc, vc
        for b, c in ([(1, 1024), (32, 2048)] if quick else [(1, 512), (1, 4096), (8, 1024), (32, 2048), (64, 4096), (128, 1024)]):
            kc = [torch.randn(b, kvh, c + 1, hd, device=dev, dtype=dt) for _ in range(nl)]
            vc = [torch.randn(b, kvh, c + 1, hd, device=dev, dtype=dt) for _ in range(nl)]
            ids = torch.randint(0, vocab, (b, 1), device=dev)
            step = lambda: forward(ids, kc, vc, c)
            for _ in range(2):
                step()
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
            ms = timed(graph.replay, reps=20)
            print(json.dumps({"kind": "decode", "batch": b, "context": c, "time_ms_median": ms}), flush=True)
            del kc, vc, graph


if __name__ == "__main__":
    main()
