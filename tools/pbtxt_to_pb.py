#!/usr/bin/python3
"""pbtxt_to_pb.py: writes the binary form of a TensorFlow GraphDef text file without TensorFlow:
the GraphDef, NodeDef, AttrValue, TensorShapeProto, TensorProto (no variant or resource data),
NameAttrList, FunctionDefLibrary (signatures and nodes), MetaGraphDef and SavedModel messages are declared here with their field numbers
from tensorflow/core/framework/*.proto and tensorflow/core/protobuf/{meta_graph,saved_model}.proto,
and Google's protobuf library (python3-protobuf) parses the text and serializes it.

Usage: /usr/bin/python3 tools/pbtxt_to_pb.py IN.pbtxt OUT.pb [--saved-model]
With --saved-model, OUT is a SavedModel (saved_model.pb) holding the graph in its first meta graph.
The test fixtures tests/data/graph/*.pb come from it; the project never needs Python.
"""
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, text_format
try:
    from google.protobuf.message_factory import GetMessageClass
except ImportError:  # protobuf < 4.21
    from google.protobuf import message_factory
    GetMessageClass = message_factory.MessageFactory().GetPrototype

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED

# message: [(name, number, label, type, type_name)]
MESSAGES = {
    "TensorShapeProto.Dim": [("size", 1, OPT, F.TYPE_INT64, None),
                             ("name", 2, OPT, F.TYPE_STRING, None)],
    "TensorShapeProto": [("dim", 2, REP, F.TYPE_MESSAGE, ".tf.TensorShapeProto.Dim"),
                         ("unknown_rank", 3, OPT, F.TYPE_BOOL, None)],
    "TensorProto": [("dtype", 1, OPT, F.TYPE_ENUM, ".tf.DataType"),
                    ("tensor_shape", 2, OPT, F.TYPE_MESSAGE, ".tf.TensorShapeProto"),
                    ("tensor_content", 4, OPT, F.TYPE_BYTES, None),
                    ("float_val", 5, REP, F.TYPE_FLOAT, None),
                    ("double_val", 6, REP, F.TYPE_DOUBLE, None),
                    ("int_val", 7, REP, F.TYPE_INT32, None),
                    ("string_val", 8, REP, F.TYPE_BYTES, None),
                    ("int64_val", 10, REP, F.TYPE_INT64, None),
                    ("bool_val", 11, REP, F.TYPE_BOOL, None)],
    "NameAttrList": [("name", 1, OPT, F.TYPE_STRING, None)],
    "AttrValue.ListValue": [("s", 2, REP, F.TYPE_BYTES, None), ("i", 3, REP, F.TYPE_INT64, None),
                            ("f", 4, REP, F.TYPE_FLOAT, None), ("b", 5, REP, F.TYPE_BOOL, None),
                            ("type", 6, REP, F.TYPE_ENUM, ".tf.DataType"),
                            ("shape", 7, REP, F.TYPE_MESSAGE, ".tf.TensorShapeProto"),
                            ("tensor", 8, REP, F.TYPE_MESSAGE, ".tf.TensorProto"),
                            ("func", 9, REP, F.TYPE_MESSAGE, ".tf.NameAttrList")],
    "AttrValue": [("list", 1, OPT, F.TYPE_MESSAGE, ".tf.AttrValue.ListValue"),
                  ("s", 2, OPT, F.TYPE_BYTES, None), ("i", 3, OPT, F.TYPE_INT64, None),
                  ("f", 4, OPT, F.TYPE_FLOAT, None), ("b", 5, OPT, F.TYPE_BOOL, None),
                  ("type", 6, OPT, F.TYPE_ENUM, ".tf.DataType"),
                  ("shape", 7, OPT, F.TYPE_MESSAGE, ".tf.TensorShapeProto"),
                  ("tensor", 8, OPT, F.TYPE_MESSAGE, ".tf.TensorProto"),
                  ("placeholder", 9, OPT, F.TYPE_STRING, None),
                  ("func", 10, OPT, F.TYPE_MESSAGE, ".tf.NameAttrList")],
    "NodeDef.AttrEntry": [("key", 1, OPT, F.TYPE_STRING, None),
                          ("value", 2, OPT, F.TYPE_MESSAGE, ".tf.AttrValue")],
    "NodeDef": [("name", 1, OPT, F.TYPE_STRING, None), ("op", 2, OPT, F.TYPE_STRING, None),
                ("input", 3, REP, F.TYPE_STRING, None), ("device", 4, OPT, F.TYPE_STRING, None),
                ("attr", 5, REP, F.TYPE_MESSAGE, ".tf.NodeDef.AttrEntry")],
    "VersionDef": [("producer", 1, OPT, F.TYPE_INT32, None),
                   ("min_consumer", 2, OPT, F.TYPE_INT32, None)],
    "OpDef.ArgDef": [("name", 1, OPT, F.TYPE_STRING, None),
                     ("type", 3, OPT, F.TYPE_ENUM, ".tf.DataType")],
    "OpDef": [("name", 1, OPT, F.TYPE_STRING, None),
              ("input_arg", 2, REP, F.TYPE_MESSAGE, ".tf.OpDef.ArgDef"),
              ("output_arg", 3, REP, F.TYPE_MESSAGE, ".tf.OpDef.ArgDef")],
    "FunctionDef": [("signature", 1, OPT, F.TYPE_MESSAGE, ".tf.OpDef"),
                    ("node_def", 3, REP, F.TYPE_MESSAGE, ".tf.NodeDef")],
    "FunctionDefLibrary": [("function", 1, REP, F.TYPE_MESSAGE, ".tf.FunctionDef")],
    "GraphDef": [("node", 1, REP, F.TYPE_MESSAGE, ".tf.NodeDef"),
                 ("library", 2, OPT, F.TYPE_MESSAGE, ".tf.FunctionDefLibrary"),
                 ("versions", 4, OPT, F.TYPE_MESSAGE, ".tf.VersionDef")],
    "MetaGraphDef": [("graph_def", 2, OPT, F.TYPE_MESSAGE, ".tf.GraphDef")],
    "SavedModel": [("saved_model_schema_version", 1, OPT, F.TYPE_INT64, None),
                   ("meta_graphs", 2, REP, F.TYPE_MESSAGE, ".tf.MetaGraphDef")],
}
DATA_TYPES = ["DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16",
              "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8",
              "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16", "DT_QINT16", "DT_QUINT16", "DT_UINT16",
              "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64"]


def build_pool():
    # proto2 keeps AttrValue's oneof members present when they hold a default (b: false), as
    # TF's proto3 oneof does; repeated numbers are packed, as proto3 packs them.
    fd = descriptor_pb2.FileDescriptorProto(name="driple_tf.proto", package="tf", syntax="proto2")
    enum = fd.enum_type.add(name="DataType")
    for i, n in enumerate(DATA_TYPES):
        enum.value.add(name=n, number=i)
    for i, n in enumerate(DATA_TYPES[1:], 1):
        enum.value.add(name=n + "_REF", number=100 + i)
    top = {}
    for full, fields in sorted(MESSAGES.items(), key=lambda kv: "." in kv[0]):
        outer, _, inner = full.partition(".")
        if inner:
            msg = top[outer].nested_type.add(name=inner)
            if inner == "AttrEntry":
                msg.options.map_entry = True
        else:
            msg = fd.message_type.add(name=outer)
            top[outer] = msg
        for name, number, label, ftype, tname in fields:
            f = msg.field.add(name=name, number=number, label=label, type=ftype)
            if tname:
                f.type_name = tname
            if label == REP and ftype not in (F.TYPE_MESSAGE, F.TYPE_STRING, F.TYPE_BYTES):
                f.options.packed = True
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return pool


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--saved-model"):
        sys.exit(__doc__)
    pool = build_pool()
    graph = GetMessageClass(pool.FindMessageTypeByName("tf.GraphDef"))()
    with open(sys.argv[1]) as f:
        text_format.Parse(f.read(), graph)
    out = graph
    if len(sys.argv) == 4:
        out = GetMessageClass(pool.FindMessageTypeByName("tf.SavedModel"))()
        out.saved_model_schema_version = 1
        out.meta_graphs.add().graph_def.CopyFrom(graph)
    with open(sys.argv[2], "wb") as f:
        f.write(out.SerializeToString())


if __name__ == "__main__":
    main()
