#!/usr/bin/python3
"""bench/torch_ref.py: an independent PyTorch implementation of the published Driple inspector
(GCN, hidden 64, one GRU shared by every layer, Set2Set, MLP head; the semantics of
../shared/reference/README.md), written as a PyTorch user would write it today: dense normalised
adjacency, batched matrix products, torch's fused GRU and LSTM cells. `make bench` (bench/run.sh)
runs it beside driple in the same run, so that both are timed on the same machine under the same
load. The project never needs Python; this only measures.

It loads the published weights, checks its outputs against every reference case (the README's
tolerance: max |out - raw| <= 1e-4 max(1, max |raw|)), then times, as medians:
  - one prediction of the reference case sparse100 (100 groups: 50 layers, 100 Set2Set steps),
    eager and torch.jit.trace (frozen), on 1 and 2 threads;
  - one training step of the paper's recipe: 32 graphs of 100 groups (the case's structure,
    features jittered per copy, seeded; random targets), MSE, Adam (lr 0.003, weight decay
    1e-6), on 1 and 2 threads.
Output: one JSON object per line, {"what", "threads", "median_ms", "min_ms", "runs"}, after a
{"check": ...} line.

Usage: /usr/bin/python3 bench/torch_ref.py [--ref DIR] [--predict-runs N] [--train-runs N]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

H = 64


def load_params(path):
    with open(path) as f:
        params = json.load(f)["params"]
    return {k: torch.tensor(v["data"], dtype=torch.float32).reshape(v["shape"])
            for k, v in params.items()}


class Inspector(torch.nn.Module):
    """The published model: x (B, N, 3) raw features, a (B, N, N) normalised adjacency."""

    def __init__(self, p):
        super().__init__()
        P = torch.nn.Parameter
        self.w0, self.b0 = P(p["conv_layers.0.W"].clone()), P(p["conv_layers.0.b"].clone())
        self.w1, self.b1 = P(p["conv_layers.1.W"].clone()), P(p["conv_layers.1.b"].clone())
        self.gru = torch.nn.GRUCell(H, H)
        self.lstm = torch.nn.LSTMCell(2 * H, H)
        with torch.no_grad():
            for cell, pre in ((self.gru, "gru.gru."), (self.lstm, "graph_read_out.set2set.lstm.")):
                for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(cell, name).copy_(p[pre + name + "_l0"])
        self.mlp = torch.nn.ModuleList(torch.nn.Linear(i, o) for i, o in ((2 * H, H), (H, H), (H, 12)))
        with torch.no_grad():
            for k, lin in enumerate(self.mlp):
                pre = "graph_read_out.mlp.fully_connected.%d.linear." % k
                lin.weight.copy_(p[pre + "weight"])
                lin.bias.copy_(p[pre + "bias"])

    def forward(self, x, a):
        B, N = x.shape[0], x.shape[1]
        layers, steps = max(1, N // 2), N
        state = F.pad(x, (0, H - x.shape[2]))  # layer 0's GRU input: the features, zero-padded
        for layer in range(layers):
            w, b = (self.w0, self.b0) if layer == 0 else (self.w1, self.b1)
            inp = x if layer == 0 else state
            y = F.leaky_relu(torch.bmm(a, inp @ w) + b, 0.01)
            # GRU: the previous state is the input, the layer's output the hidden state
            state = self.gru(state.reshape(B * N, H), y.reshape(B * N, H)).reshape(B, N, H)
        h = x.new_zeros(B, H)
        c = x.new_zeros(B, H)
        q_star = x.new_zeros(B, 2 * H)
        for _ in range(steps):
            h, c = self.lstm(q_star, (h, c))
            e = torch.bmm(state, h.unsqueeze(2))                   # (B, N, 1)
            att = torch.softmax(e, dim=1)
            r = torch.bmm(att.transpose(1, 2), state).squeeze(1)   # (B, H)
            q_star = torch.cat([h, r], dim=1)
        z = F.relu(self.mlp[0](q_star))
        z = F.relu(self.mlp[1](z))
        return F.leaky_relu(self.mlp[2](z), 0.01)


def graph_tensors(path):
    """x (1, N, 3) and the normalised adjacency D^-1/2 (A + I) D^-1/2, (1, N, N)."""
    with open(path) as f:
        g = json.load(f)
    n = len(g["groups"])
    x = torch.tensor([[gr["tensor_size"], gr["ops"], gr["type_weight"]] for gr in g["groups"]],
                     dtype=torch.float32)
    a = torch.eye(n)
    for i, j in g["edges"]:
        a[i, j] = a[j, i] = 1.0
    d = a.sum(1).rsqrt()
    return x.unsqueeze(0), (d[:, None] * a * d[None, :]).unsqueeze(0)


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms), min(ms)


def emit(what, threads, med, mn, runs):
    print(json.dumps({"what": what, "threads": threads, "median_ms": round(med, 3),
                      "min_ms": round(mn, 3), "runs": runs}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", default=os.environ.get("REF_DIR", "../shared/reference"))
    ap.add_argument("--predict-runs", type=int, default=100)
    ap.add_argument("--train-runs", type=int, default=5)
    o = ap.parse_args()
    model = Inspector(load_params(os.path.join(o.ref, "gcn_pretrained_weights.json")))
    with open(os.path.join(o.ref, "cases/gcn/expected.json")) as f:
        cases = json.load(f)["cases"]
    worst = 0.0
    with torch.inference_mode():
        for name, want in cases.items():
            x, a = graph_tensors(os.path.join(o.ref, "cases/gcn/%s.grouped.json" % name))
            got = model(x, a)[0].double()
            ref = torch.tensor(want["raw"], dtype=torch.float64)
            worst = max(worst, float((got - ref).abs().max() / max(1.0, float(ref.abs().max()))))
    ok = worst <= 1e-4
    print(json.dumps({"check": "reference cases", "cases": len(cases), "worst_rel_err": worst,
                      "ok": ok, "torch": torch.__version__}), flush=True)
    if not ok:
        sys.exit(1)

    x, a = graph_tensors(os.path.join(o.ref, "cases/gcn/sparse100.grouped.json"))
    with torch.inference_mode():
        traced = torch.jit.freeze(torch.jit.trace(model.eval(), (x, a)))
    for threads in (1, 2):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            med, mn = median_ms(lambda: model(x, a), o.predict_runs, 5)
            emit("predict", threads, med, mn, o.predict_runs)
            med, mn = median_ms(lambda: traced(x, a), o.predict_runs, 5)
            emit("predict_jit", threads, med, mn, o.predict_runs)

    # the paper's recipe: 32 graphs of one size, MSE, Adam (lr 0.003, weight decay 1e-6)
    gen = torch.Generator().manual_seed(12345)
    B = 32
    xb = x.expand(B, -1, -1) * (0.9 + 0.2 * torch.rand(B, x.shape[1], x.shape[2], generator=gen))
    ab = a.expand(B, -1, -1).contiguous()
    target = torch.rand(B, 12, generator=gen)
    train_model = Inspector(load_params(os.path.join(o.ref, "gcn_pretrained_weights.json")))
    opt = torch.optim.Adam(train_model.parameters(), lr=0.003, weight_decay=1e-6)

    def step():
        opt.zero_grad()
        loss = F.mse_loss(train_model(xb, ab), target)
        loss.backward()
        opt.step()

    for threads in (1, 2):
        torch.set_num_threads(threads)
        med, mn = median_ms(step, o.train_runs, 1)
        emit("train", threads, med, mn, o.train_runs)


if __name__ == "__main__":
    main()
