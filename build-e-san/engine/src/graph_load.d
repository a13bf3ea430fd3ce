build-e-san/engine/src/graph_load.o: engine/src/graph_load.c \
 engine/include/dp/graph_io.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/onnx.h
engine/include/dp/graph_io.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/onnx.h:
