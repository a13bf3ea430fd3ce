build-e-san/engine/src/features.o: engine/src/features.c \
 engine/include/dp/coarsen.h engine/include/dp/graph.h \
 engine/include/dp/status.h engine/include/dp/grouped.h
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
