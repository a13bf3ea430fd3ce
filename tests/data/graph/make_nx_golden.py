#!/usr/bin/env python3
"""Makes the networkx golden file for test_coarsen (provenance of nx_alexnet.*).

Usage: driple zoo build alexnet -o /tmp/alexnet.json
       python3 tests/data/graph/make_nx_golden.py /tmp/alexnet.json tests/data/graph

Writes nx_alexnet.json (the zoo graph without attrs/costs, plus a 3-op second component and an
isolated GPU op, so that Driple's subgraph copy is exercised) and nx_alexnet.txt: for each case
"case K SEED", then one line per community as networkx lists it ("group NAME..."), then "end".
The graph is built as Driple's published code builds it: GPU ops in file order, an edge
(input, op) for each input in order ("x:1" -> x, "^x" -> x), isolates removed, the largest
component copied when there are several, then asyn_fluidc(G, k, seed=SEED).
"""
import json, sys
import networkx as nx
from networkx.algorithms.community import asyn_fluidc

src, outdir = sys.argv[1], sys.argv[2]
d = json.load(open(src))
nodes = [{k: n[k] for k in ("name", "op", "device", "inputs", "shape", "dtype") if k in n}
         for n in d["nodes"]]
extra = [{"name": "side/a", "op": "Relu", "device": "/device:GPU:0"},
         {"name": "side/b", "op": "Relu", "device": "/device:GPU:0", "inputs": ["side/a"]},
         {"name": "side/c", "op": "Relu", "device": "/device:GPU:0", "inputs": ["side/b:0", "^side/a"]},
         {"name": "iso", "op": "NoOp", "device": "/device:GPU:0"}]
nodes = nodes[:40] + extra + nodes[40:]
g = {"format": "driple-graph/1", "name": "nx_alexnet", "framework": d.get("framework", ""),
     "batch": d.get("batch"), "nodes": nodes}
with open(f"{outdir}/nx_alexnet.json", "w") as f:
    json.dump(g, f, separators=(",", ":"))
    f.write("\n")

gpu = [n["name"] for n in nodes if "GPU" in n.get("device", "") or "gpu" in n.get("device", "")]
gs = set(gpu)
G = nx.Graph()
G.add_nodes_from(gpu)
for n in nodes:
    if n["name"] not in gs:
        continue
    for i in n.get("inputs", []):
        s = i[1:] if i.startswith("^") else i
        if s not in gs and ":" in s:
            s = s.rsplit(":", 1)[0]
        if s in gs and s != n["name"]:
            G.add_edge(s, n["name"])
G.remove_nodes_from(list(nx.isolates(G)))
if nx.number_connected_components(G) > 1:
    G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
with open(f"{outdir}/nx_alexnet.txt", "w") as f:
    f.write(f"# networkx {nx.__version__} asyn_fluidc on nx_alexnet.json (make_nx_golden.py)\n")
    for k, seed in [(100, 42), (20, 42), (7, 1), (100, 123456789012)]:
        f.write(f"case {k} {seed}\n")
        for c in asyn_fluidc(G, k, seed=seed):
            f.write("group " + " ".join(sorted(c)) + "\n")
        f.write("end\n")
