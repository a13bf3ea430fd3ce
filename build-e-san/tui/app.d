build-e-san/tui/app.o: tui/app.c tui/app.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/status.h \
 engine/include/dp/grouped.h engine/include/dp/inspector.h \
 engine/include/dp/model.h engine/include/dp/settings.h \
 engine/include/dp/graph_io.h engine/include/dp/sim.h \
 engine/include/dp/trace.h engine/include/dp/train.h \
 engine/include/dp/dataset.h engine/include/dp/zoo.h
tui/app.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/status.h:
engine/include/dp/grouped.h:
engine/include/dp/inspector.h:
engine/include/dp/model.h:
engine/include/dp/settings.h:
engine/include/dp/graph_io.h:
engine/include/dp/sim.h:
engine/include/dp/trace.h:
engine/include/dp/train.h:
engine/include/dp/dataset.h:
engine/include/dp/zoo.h:
