build-e-san/tui/cmd_explain.o: tui/cmd_explain.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/grouped.h \
 engine/include/dp/explain.h engine/include/dp/model.h \
 engine/include/dp/graph_io.h engine/include/dp/inspector.h \
 engine/include/dp/render.h engine/include/dp/settings.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/grouped.h:
engine/include/dp/explain.h:
engine/include/dp/model.h:
engine/include/dp/graph_io.h:
engine/include/dp/inspector.h:
engine/include/dp/render.h:
engine/include/dp/settings.h:
