build-e-san/engine/src/coarsen.o: engine/src/coarsen.c \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
