build-e-san/tui/cmd_model.o: tui/cmd_model.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/grouped.h \
 engine/include/dp/dataset.h engine/include/dp/model.h \
 engine/include/dp/graph_io.h engine/include/dp/inspector.h \
 engine/include/dp/settings.h engine/include/dp/train.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/grouped.h:
engine/include/dp/dataset.h:
engine/include/dp/model.h:
engine/include/dp/graph_io.h:
engine/include/dp/inspector.h:
engine/include/dp/settings.h:
engine/include/dp/train.h:
