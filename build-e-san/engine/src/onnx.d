build-e-san/engine/src/onnx.o: engine/src/onnx.c engine/include/dp/onnx.h \
 engine/include/dp/graph_io.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/src/zoo_builder.h \
 engine/include/dp/zoo.h engine/include/dp/settings.h
engine/include/dp/onnx.h:
engine/include/dp/graph_io.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/src/zoo_builder.h:
engine/include/dp/zoo.h:
engine/include/dp/settings.h:
