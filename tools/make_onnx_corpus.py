#!/usr/bin/python3
"""make_onnx_corpus.py: regenerates tests/data/onnx/corpus/, real exports of torchvision and
torch.nn models by PyTorch's own exporter (Debian's python3-torch 1.13, python3-torchvision 0.14,
python3-onnx), in training and eval mode, with the weights stripped to external data that is not
kept (driple reads the initializers' dims without their data), and manifest.json: per model the
file, mode, opset, input, the framework's parameter count (sum of p.numel() over
model.parameters()) and the published forward cost where one is published.

Published costs are multiply-adds at 224x224 (a 16-frame 112x112 clip for the video model; one
multiply-add counts 1) from torchvision's model
documentation (the "GFLOPS" column, each model's weights metadata "_ops", torchvision 0.15+),
which counts convolutions, linear layers and matrix products as multiply-adds.

Usage: /usr/bin/python3 tools/make_onnx_corpus.py [OUT_DIR] [--only NAME,...]
       /usr/bin/python3 tools/make_onnx_corpus.py --inflate STRIPPED.onnx OUT.onnx
The second form writes a copy of a stripped export with every external initializer stored inline
(zeros): `make bench` uses it for the 350 MB ViT-B/16 import timing.
The project itself never needs Python: the corpus is committed.
"""
import json
import math
import os
import sys
import tempfile

TORCHVISION_DOCS = ("torchvision model documentation, GFLOPS column (weights metadata _ops, "
                    "torchvision 0.15+): multiply-adds at 224x224")
TORCHVISION_VIDEO_DOCS = ("torchvision model documentation, GFLOPS column (weights metadata _ops, "
                          "torchvision 0.15+): multiply-adds of a 16-frame 112x112 clip")


def _tv(name, **kw):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def _video(name):
    import torchvision.models.video
    return lambda: getattr(torchvision.models.video, name)(weights=None)


def _no_stochastic_depth(factory):
    """Stochastic depth draws with bernoulli_, which PyTorch 1.13 cannot export in training
    mode: the same model with its drop probability 0 (same layers and parameters)."""
    def make():
        import torchvision
        model = factory()
        for m in model.modules():
            if isinstance(m, torchvision.ops.StochasticDepth):
                m.p = 0.0
        return model
    return make


def _lstm_lm(kind, vocab, hidden, layers):
    import torch.nn as nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            rnn = nn.LSTM if kind == "lstm" else nn.GRU
            # no dropout between the layers: PyTorch 1.13 cannot export it in training mode
            self.rnn = rnn(hidden, hidden, layers, batch_first=True)
            self.drop = nn.Dropout(0.5)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            y, _ = self.rnn(self.drop(self.embed(tokens)))
            return self.out(self.drop(y))
    return LM


def _seq2seq():
    import torch.nn as nn

    class Seq2Seq(nn.Module):
        """torch.nn.Transformer (6 + 6 layers, d 512, 8 heads: the base model of "Attention is
        all you need") between token embeddings and a generator, the decoder causally masked."""

        def __init__(self, vocab=32000, d=512, length=64):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, d)
            self.tgt_embed = nn.Embedding(vocab, d)
            self.transformer = nn.Transformer(d, 8, 6, 6, 2048, 0.1, batch_first=True)
            self.generator = nn.Linear(d, vocab)
            self.register_buffer("tgt_mask", nn.Transformer.generate_square_subsequent_mask(length))

        def forward(self, src, tgt):
            y = self.transformer(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=self.tgt_mask)
            return self.generator(y)
    return Seq2Seq


def _gpt():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d, heads, length):
            super().__init__()
            self.heads = heads
            self.ln_1 = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.ln_2 = nn.LayerNorm(d)
            self.c_fc = nn.Linear(d, 4 * d)
            self.mlp_proj = nn.Linear(4 * d, d)
            self.drop = nn.Dropout(0.1)
            self.register_buffer("bias", torch.tril(torch.ones(length, length))
                                 .view(1, 1, length, length))

        def forward(self, x):
            b, t, d = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
            q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
            att = self.drop(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
            x = x + self.drop(self.c_proj(y))
            return x + self.drop(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)))))

    class GPT(nn.Module):
        """A GPT-2-small-style decoder (12 layers, d 768, 12 heads, 50257 tokens, 1024
        positions) with its causal mask, the output layer tied to the token embedding."""

        def __init__(self, vocab=50257, d=768, layers=12, heads=12, length=1024):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(length, d)
            self.h = nn.ModuleList([Block(d, heads, length) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight

        def forward(self, tokens):
            t = tokens.size(1)
            pos = torch.arange(0, t, dtype=torch.long, device=tokens.device).unsqueeze(0)
            x = self.wte(tokens) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))
    return GPT


def _bert_encoder():
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        """A BERT-base-sized nn.TransformerEncoder (12 layers, d 768, 12 heads, 30,522 tokens,
        128 positions): 132,065,082 parameters. Its layers are deep copies, so the eval export's
        constant folding writes equal weights once and the rest as Identity nodes (issue 31)."""

        def __init__(self, vocab=30522, d=768, layers=12, length=128):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(length, d)
            self.enc = nn.TransformerEncoder(
                nn.TransformerEncoderLayer(d, 12, 3072, 0.1, batch_first=True), layers)
            self.out = nn.Linear(d, vocab)

        def forward(self, x):
            p = torch.arange(x.size(1)).unsqueeze(0)
            return self.out(self.enc(self.emb(x) + self.pos(p)))
    return Encoder


# name, model factory, mode, opset, inputs (shape and dtype, batch 2), published GMACs.
IMAGE = [((2, 3, 224, 224), "float")]
CORPUS = [
    ("alexnet", _tv("alexnet"), "train", 13, IMAGE, 0.714),
    ("resnet18", _tv("resnet18"), "train", 11, IMAGE, 1.814),
    ("resnet50", _tv("resnet50"), "train", 13, IMAGE, 4.089),
    ("resnet50_eval", _tv("resnet50"), "eval", 13, IMAGE, 4.089),
    ("resnext50_32x4d", _tv("resnext50_32x4d"), "train", 14, IMAGE, 4.23),
    ("regnet_y_800mf", _tv("regnet_y_800mf"), "train", 15, IMAGE, 0.834),
    ("densenet121", _tv("densenet121"), "train", 12, IMAGE, 2.834),
    ("shufflenet_v2_x1_0", _tv("shufflenet_v2_x1_0"), "train", 13, IMAGE, 0.14),
    ("mnasnet1_0", _tv("mnasnet1_0"), "train", 11, IMAGE, 0.314),
    ("mobilenet_v2", _tv("mobilenet_v2"), "train", 13, IMAGE, 0.301),
    ("mobilenet_v3_large", _tv("mobilenet_v3_large"), "train", 14, IMAGE, 0.217),
    ("mobilenet_v3_large_eval", _tv("mobilenet_v3_large"), "eval", 17, IMAGE, 0.217),
    ("efficientnet_b0", _no_stochastic_depth(_tv("efficientnet_b0")), "train", 13, IMAGE, 0.386),
    ("convnext_tiny", _no_stochastic_depth(_tv("convnext_tiny")), "train", 17, IMAGE, 4.456),
    ("googlenet", _tv("googlenet", aux_logits=False, init_weights=True), "train", 13, IMAGE, 1.498),
    ("squeezenet1_0", _tv("squeezenet1_0"), "train", 9, IMAGE, 0.819),
    ("squeezenet1_1_eval", _tv("squeezenet1_1"), "eval", 7, IMAGE, 0.349),
    ("vit_b_16", _tv("vit_b_16"), "train", 17, IMAGE, 17.564),
    ("vit_b_16_eval", _tv("vit_b_16"), "eval", 14, IMAGE, 17.564),
    ("swin_t", _no_stochastic_depth(_tv("swin_t")), "train", 14, IMAGE, 4.491),
    ("transformer", _seq2seq(), "train", 13, [((2, 64), "long"), ((2, 64), "long")], None),
    ("gpt_decoder", _gpt(), "train", 14, [((2, 1024), "long")], None),
    ("lstm_lm", _lstm_lm("lstm", 10000, 650, 2), "train", 13, [((2, 35), "long")], None),
    ("lstm_lm_eval", _lstm_lm("lstm", 10000, 650, 2), "eval", 11, [((2, 35), "long")], None),
    ("gru_lm", _lstm_lm("gru", 10000, 512, 1), "train", 13, [((2, 35), "long")], None),
    ("regnet_y_800mf_eval", _tv("regnet_y_800mf"), "eval", 16, IMAGE, 0.834),
    ("densenet121_eval", _tv("densenet121"), "eval", 9, IMAGE, 2.834),
    ("r3d_18", _video("r3d_18"), "train", 13, [((2, 3, 16, 112, 112), "float")], 40.697),
    ("bert_encoder_eval", _bert_encoder(), "eval", 14, [((2, 128), "long")], None),
]


def strip(model_proto, data_name):
    """Moves every initializer of 1 KiB or more to external data named data_name; the caller
    does not keep that file. Drops doc strings (the exporter's stack traces)."""
    from onnx import external_data_helper
    external_data_helper.convert_model_to_external_data(
        model_proto, all_tensors_to_one_file=True, location=data_name, size_threshold=1024)
    for node in model_proto.graph.node:
        node.doc_string = ""
    model_proto.doc_string = ""


def export(name, factory, mode, opset, inputs, out_dir):
    import onnx
    import torch
    torch.manual_seed(0)
    model = factory()
    model.train(mode == "train")
    params = sum(p.numel() for p in model.parameters())
    args = tuple(torch.randn(*s) if t == "float" else torch.randint(0, 100, s)
                 for s, t in inputs)
    in_names = ["input"] if len(inputs) == 1 else ["src", "tgt"]
    dyn = {n: {0: "batch"} for n in in_names + ["output"]}
    training = torch.onnx.TrainingMode.TRAINING if mode == "train" else torch.onnx.TrainingMode.EVAL
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, name + ".onnx")
        torch.onnx.export(model, args, raw, opset_version=opset, training=training,
                          do_constant_folding=mode != "train", input_names=in_names,
                          output_names=["output"], dynamic_axes=dyn)
        proto = onnx.load(raw)
        strip(proto, name + ".data")
        onnx.save(proto, os.path.join(tmp, "stripped.onnx"))
        with open(os.path.join(tmp, "stripped.onnx"), "rb") as f:
            data = f.read()
    with open(os.path.join(out_dir, name + ".onnx"), "wb") as f:
        f.write(data)
    return params, len(data)


def inflate(src, dst):
    """Writes src with every external initializer inline (zeros of its size)."""
    import onnx
    from onnx import external_data_helper
    proto = onnx.load(src, load_external_data=False)
    for t in proto.graph.initializer:
        if external_data_helper.uses_external_data(t):
            n = math.prod(t.dims)
            size = {1: 4, 6: 4, 7: 8, 10: 2, 11: 8}.get(t.data_type, 4)
            del t.external_data[:]
            t.data_location = onnx.TensorProto.DEFAULT
            t.raw_data = bytes(n * size)
    onnx.save(proto, dst)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--inflate":
        inflate(sys.argv[2], sys.argv[3])
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--only")]
    only = None
    for a in sys.argv[1:]:
        if a.startswith("--only"):
            only = set(a.split("=", 1)[1].split(","))
    out_dir = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "tests", "data",
                                                "onnx", "corpus")
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    entries = {}
    if only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            entries = {m["model"]: m for m in json.load(f)["models"]}
    import onnx
    import torch
    failed = []
    for name, factory, mode, opset, inputs, gmacs in CORPUS:
        if only and name not in only:
            continue
        try:
            params, size = export(name, factory, mode, opset, inputs, out_dir)
        except Exception as e:  # one model's exporter failure must not lose the others
            print("%s: export failed: %s" % (name, e), file=sys.stderr, flush=True)
            failed.append(name)
            continue
        entries[name] = {
            "model": name, "file": name + ".onnx", "mode": mode, "opset": opset,
            "inputs": [list(s) for s, _ in inputs], "params": params,
            "published_gmacs": gmacs,
            "source": None if not gmacs else TORCHVISION_VIDEO_DOCS if len(inputs[0][0]) == 5
            else TORCHVISION_DOCS,
        }
        print("%-26s %-5s opset %2d  %11d params  %8d bytes" % (name, mode, opset, params, size),
              flush=True)
    manifest = {
        "format": "driple-onnx-corpus/1",
        "generator": "tools/make_onnx_corpus.py: torch %s, torchvision %s, onnx %s" % (
            torch.__version__, __import__("torchvision").__version__, onnx.__version__),
        "macs_convention": "a multiply-add counts 1",
        "models": [entries[n] for n, *_ in CORPUS if n in entries],
    }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    if failed:
        sys.exit("export failed: " + ", ".join(failed))


if __name__ == "__main__":
    main()
