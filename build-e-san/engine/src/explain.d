build-e-san/engine/src/explain.o: engine/src/explain.c \
 engine/include/dp/explain.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/status.h \
 engine/include/dp/grouped.h engine/include/dp/model.h
engine/include/dp/explain.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/model.h:
