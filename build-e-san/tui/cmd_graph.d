build-e-san/tui/cmd_graph.o: tui/cmd_graph.c tui/cli.h \
 engine/include/dp/status.h tui/cmd.h engine/include/dp/coarsen.h \
 engine/include/dp/graph.h engine/include/dp/grouped.h \
 engine/include/dp/graph_io.h
tui/cli.h:
engine/include/dp/status.h:
tui/cmd.h:
engine/include/dp/coarsen.h:
engine/include/dp/graph.h:
engine/include/dp/grouped.h:
engine/include/dp/graph_io.h:
