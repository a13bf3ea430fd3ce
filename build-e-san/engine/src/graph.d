build-e-san/engine/src/graph.o: engine/src/graph.c \
 engine/include/dp/graph.h engine/include/dp/status.h
engine/include/dp/graph.h:
engine/include/dp/status.h:
