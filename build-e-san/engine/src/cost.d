build-e-san/engine/src/cost.o: engine/src/cost.c engine/include/dp/cost.h \
 engine/include/dp/graph.h engine/include/dp/status.h
engine/include/dp/cost.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
